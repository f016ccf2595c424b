"""What every optimizer shares: parameter groups, per-parameter state, `zero_grad` and state dicts.

A *parameter* is anything with `.data` (a float32 or float64 array, updated in place) and `.grad` (an array
of the same shape, or None). An optimizer holds *parameter groups*, as PyTorch does: dicts with "params" and
the hyperparameters that apply to them ("lr", "weight_decay", ...), which is how BERT switches weight decay
off for LayerNorm and bias parameters (see `bert_recipe.py`). The per-parameter state (Adam's running
averages) is keyed by the parameter's position; `state_dict()` holds only NumPy arrays and plain Python
values, so a checkpoint stores it in an .npz file plus JSON, never with pickle.
"""

# A parameter's `.grad` is None when the parameter got no gradient this step.
# Passing a plain list of parameters makes one group with the optimizer's defaults; passing a list of dicts
# lets each group override them.
# The position is: groups in order, parameters in order within a group. That position is also what
# `state_dict()` records, so a state dict can be loaded into a fresh optimizer built over the same model.
# `state_dict()` holds only NumPy arrays and plain Python scalars, lists and dicts.

import numpy as np

from minibert.errors import CheckpointError, ConfigError, MinibertError, ShapeError


class Optimizer:
    """Base class. Subclasses set `state_keys` and implement `step()` and `check_hyperparameters(group)`."""

    # The names of the per-parameter state entries, e.g. ("step", "exp_avg", "exp_avg_sq") for Adam.
    state_keys = ()

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.check_hyperparameters(self.defaults)
        self.param_groups = []
        self.state = {}  # parameter position -> {state key: array or int}
        self._seen_ids = set()
        self._work_arrays = {}
        groups = _as_group_list(params)
        if not groups:
            raise ConfigError("the optimizer got an empty parameter list; pass model.parameters() "
                              "or a list of parameter groups")
        for group in groups:
            self.add_param_group(group)

    def check_hyperparameters(self, group):
        """Raise ConfigError when a hyperparameter in `group` cannot work."""
        raise NotImplementedError

    def step(self):
        """Update every parameter that has a gradient."""
        raise NotImplementedError

    def add_param_group(self, group):
        """Add a group: {"params": [...], optional overrides of the defaults, optional extra keys}."""
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError("a parameter group must be a dict with a 'params' entry, "
                            f"got {type(group).__name__}")
        group = dict(group)
        params = group["params"]
        params = [params] if hasattr(params, "data") else list(params)
        for param in params:
            _check_parameter(param, len(self.param_groups))
            if id(param) in self._seen_ids:
                raise ConfigError("a parameter appears in more than one parameter group (or twice in one); "
                                  "give each parameter to exactly one group")
            self._seen_ids.add(id(param))
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.check_hyperparameters(group)
        group["params"] = params
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Forget the gradients before the next backward pass (gradients accumulate, as in micrograd).

        With `set_to_none` (PyTorch's default) the gradient becomes None, which also tells `step()` to skip
        a parameter that the next backward pass does not reach; otherwise it is filled with zeros in place.
        """
        # BEGIN EXERCISE zero_grad: every group's every parameter: .grad None, or its array zeroed in place
        for group in self.param_groups:
            for param in group["params"]:
                if set_to_none:
                    param.grad = None
                elif param.grad is not None:
                    param.grad.fill(0)
        # END EXERCISE

    def parameters_with_gradients(self):
        """Yield (group, position, data, grad) for every parameter whose `.grad` is not None."""
        position = 0
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    if not param.data.flags.c_contiguous:
                        raise ShapeError(f"parameter {position} holds a non-contiguous array (a transposed "
                                         "or strided view), which cannot be updated in place in flat "
                                         "slices; give it np.ascontiguousarray(...) instead")
                    if param.grad.shape != param.data.shape:
                        raise ShapeError(f"parameter {position} has shape {param.data.shape} but its "
                                         f"gradient has shape {param.grad.shape}; the backward pass must "
                                         "produce one gradient entry per parameter entry")
                    yield group, position, param.data, param.grad
                position += 1

    def work_array(self, like, slot=0):
        """A scratch array shaped like `like`, reused across parameters and steps.

        One flat buffer per (dtype, slot), grown to the largest size asked for, so that a step allocates
        nothing once it has run once. `slot` tells apart buffers that are needed at the same time.
        """
        key = (like.dtype.str, slot)
        buffer = self._work_arrays.get(key)
        if buffer is None or buffer.size < like.size:
            buffer = np.empty(like.size, dtype=like.dtype)
            self._work_arrays[key] = buffer
        return buffer[: like.size].reshape(like.shape)

    def state_dict(self):
        """A copy of the optimizer's state: {"state": {position: {...}}, "param_groups": [{...}]}.

        Arrays are copies (a later step does not change a saved state dict); everything else is an int,
        float, str, list or dict. Each group lists the positions of its parameters under "params".
        """
        groups = []
        position = 0
        for group in self.param_groups:
            saved = {key: _plain(value) for key, value in group.items() if key != "params"}
            saved["params"] = list(range(position, position + len(group["params"])))
            position += len(group["params"])
            groups.append(saved)
        state = {
            position: {key: value.copy() if isinstance(value, np.ndarray) else value
                       for key, value in entries.items()}
            for position, entries in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a `state_dict()` taken from an optimizer of the same type over the same model.

        Everything is checked before anything changes, so a bad state dict leaves the optimizer as it was.
        Position keys may be ints or their strings (as after a JSON round trip).
        """
        params = [param for group in self.param_groups for param in group["params"]]
        try:
            saved_groups = _checked_groups(state_dict, self.param_groups)
            new_state = {}
            for key, entries in state_dict["state"].items():
                position = _checked_position(key, len(params))
                new_state[position] = self._checked_state(position, entries, params[position].data)
            for group, saved in zip(self.param_groups, saved_groups, strict=True):
                hyperparameters = {key: _restored(value, self.defaults.get(key))
                                   for key, value in saved.items() if key != "params"}
                self.check_hyperparameters({**group, **hyperparameters})
                group.update(hyperparameters)
        except MinibertError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
            # A state dict from a damaged or hostile checkpoint: a field of the wrong kind (None for a list).
            raise CheckpointError(f"the optimizer state dict is malformed ({type(error).__name__}: {error}); "
                                  "it was not written by state_dict(): use another checkpoint") from None
        self.state = new_state

    def _checked_state(self, position, entries, data):
        if not isinstance(entries, dict) or set(entries) != set(self.state_keys):
            found = sorted(entries) if isinstance(entries, dict) else type(entries).__name__
            raise CheckpointError(f"optimizer state for parameter {position} has entries {found}, but "
                                  f"{type(self).__name__} keeps {sorted(self.state_keys)}; was it saved by "
                                  "another optimizer type?")
        restored = {}
        for key, value in entries.items():
            if key == "step":
                restored[key] = _checked_step(value, position)
            else:
                value = np.asarray(value)
                if value.shape != data.shape or value.dtype != data.dtype:
                    raise CheckpointError(f"optimizer state '{key}' for parameter {position} is "
                                          f"{value.dtype} {value.shape}, but the parameter is {data.dtype} "
                                          f"{data.shape}; the checkpoint is from another model or precision")
                restored[key] = value.copy()
        return restored


def _as_group_list(params):
    """A plain iterable of parameters becomes one group; a list of dicts stays a list of groups."""
    if isinstance(params, dict):
        raise TypeError("pass parameters as a list (or generator) of parameters or of group dicts, not a "
                        "dict; for named parameters use [p for _, p in model.named_parameters()]")
    items = list(params)
    if items and all(isinstance(item, dict) for item in items):
        return items
    if any(isinstance(item, dict) for item in items):
        raise TypeError("pass either parameters or parameter-group dicts, not a mix of both")
    return [{"params": items}] if items else []


def _check_parameter(param, group_index):
    data = getattr(param, "data", None)
    if not isinstance(data, np.ndarray) or not hasattr(param, "grad"):
        raise TypeError(f"group {group_index} holds a {type(param).__name__}, which is not a parameter: an "
                        "optimizer needs objects with a NumPy array in `.data` and a `.grad` attribute")
    if data.dtype not in (np.float32, np.float64):
        raise TypeError(f"group {group_index} holds a parameter of dtype {data.dtype}; optimizers update "
                        "float32 or float64 arrays")


def _plain(value):
    """Tuples become lists, so a group's hyperparameters survive a JSON round trip unchanged."""
    return list(value) if isinstance(value, tuple) else value


def _restored(value, default):
    """Undo `_plain`: a hyperparameter whose default is a tuple (Adam's betas) becomes a tuple again."""
    if isinstance(default, tuple):
        return tuple(float(item) for item in value)
    return value


def _checked_groups(state_dict, groups):
    if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
        raise CheckpointError("an optimizer state dict must be a dict with exactly the keys 'state' and "
                              "'param_groups'")
    saved_groups = state_dict["param_groups"]
    if len(saved_groups) != len(groups):
        raise CheckpointError(f"the optimizer state dict has {len(saved_groups)} parameter groups but this "
                              f"optimizer has {len(groups)}; build the optimizer the same way as when saving")
    for index, (group, saved) in enumerate(zip(groups, saved_groups, strict=True)):
        if len(saved["params"]) != len(group["params"]):
            raise CheckpointError(f"parameter group {index} has {len(group['params'])} parameters but the "
                                  f"state dict's has {len(saved['params'])}; the checkpoint is from another "
                                  "model")
        if "names" in group and "names" in saved:
            _check_same_names(index, list(group["names"]), list(saved["names"]))
    return saved_groups


def _checked_step(value, position):
    """A step count read back from a checkpoint: a whole number >= 0 (an int or a 0-d integer array)."""
    if np.ndim(value) != 0 or not np.issubdtype(np.asarray(value).dtype, np.integer) or int(value) < 0:
        raise CheckpointError(f"optimizer state for parameter {position}: step={value!r} is not a "
                              "non-negative whole number")
    return int(value)


def _check_same_names(index, ours, saved):
    """Groups built by `bert_param_groups` carry parameter names: a cheap check that the model is the same."""
    for position, (name, saved_name) in enumerate(zip(ours, saved, strict=False)):
        if name != saved_name:
            raise CheckpointError(f"parameter {position} of group {index} is {name!r} here but "
                                  f"{saved_name!r} in the state dict; the checkpoint is from another model")
    if len(ours) != len(saved):
        raise CheckpointError(f"group {index} names {len(ours)} parameters here but {len(saved)} in the "
                              "state dict; the checkpoint is from another model")


def _checked_position(key, count):
    try:
        position = int(key)
    except (TypeError, ValueError):
        raise CheckpointError(f"optimizer state key {key!r} is not a parameter position") from None
    if not 0 <= position < count:
        raise CheckpointError(f"optimizer state for parameter {position}, but the optimizer has {count} "
                              "parameters; the checkpoint is from another model")
    return position
