"""`Module` and `Parameter`: how layers hold their weights, find each other's, and switch train/eval.

A `Parameter` is a Tensor that is learned: it always requires a gradient. A `Module` is anything built from
parameters and smaller modules. Assigning one as an attribute (`self.dense = Linear(...)`) registers it, so
the module tree can be walked: `named_parameters()` yields `("encoder.layer.0.attention.self.query.weight",
parameter)`, names made of the attribute path, chosen to be exactly HuggingFace's, which is why a real BERT
checkpoint loads by name, with no translation table.
"""

# The same walk gives `state_dict()` / `load_state_dict()` (the weights as plain arrays, by name), `train()` /
# `eval()` (dropout on or off), `zero_grad()`, and `to(dtype)` (float64 for gradient checks).

import numpy as np

from minibert.autograd import Tensor
from minibert.errors import CheckpointError, ConfigError
from minibert.kernels.dispatch import FLOAT_DTYPES


class Parameter(Tensor):
    """A learned tensor: floating point and always `requires_grad=True`."""

    def __init__(self, data):
        super().__init__(np.asarray(data), requires_grad=True)

    def __repr__(self):
        return f"Parameter(shape={self.shape}, dtype={self.dtype})"


class Module:
    """Base class of every layer. Subclasses set parameters and submodules as attributes in `__init__`
    (after calling `super().__init__()`) and compute in `forward`; call the module itself to run it."""

    def __init__(self):
        # object.__setattr__: our own __setattr__ below needs these dicts to exist already.
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise TypeError(f"{type(self).__name__}.__init__ must call super().__init__() before setting "
                            f"attribute {name!r}")
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    # ----- walking the tree -----
    def named_modules(self, prefix=""):
        """Every module in the tree, this one first, with its dotted name ("" for this one)."""
        yield prefix, self
        for name, module in self._modules.items():
            yield from module.named_modules(f"{prefix}{name}.")

    def named_parameters(self):
        """`(dotted name, Parameter)` for every parameter, in the order they were set. A parameter shared by
        two modules (a tied weight) is listed once, under the name met first, so an optimizer updates it once
        and its gradient already holds both uses."""
        seen = set()
        for module_name, module in self.named_modules():
            for name, parameter in module._parameters.items():
                if id(parameter) not in seen:
                    seen.add(id(parameter))
                    yield module_name + name, parameter

    def parameters(self):
        return [parameter for _, parameter in self.named_parameters()]

    def num_parameters(self):
        """How many numbers the model learns (tied weights counted once)."""
        return sum(parameter.size for parameter in self.parameters())

    # ----- modes and gradients -----
    def train(self, mode=True):
        """Training mode: dropout is active. Returns self, so `model.train()` can be chained."""
        for _, module in self.named_modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self):
        """Evaluation mode: dropout is the identity, so the same input always gives the same output."""
        return self.train(False)

    def zero_grad(self):
        """Clear every parameter's gradient (gradients accumulate across backward() calls, as in PyTorch)."""
        for parameter in self.parameters():
            parameter.grad = None

    def to(self, dtype):
        """Convert every parameter to `dtype` (float32 to train, float64 for gradient checks), in place: the
        Parameter objects stay the same, so tied weights stay tied and an optimizer's references stay
        valid."""
        dtype = np.dtype(dtype)
        if dtype not in FLOAT_DTYPES:
            raise ConfigError(f"to({dtype}): parameters can be float32 or float64")
        for parameter in self.parameters():
            if parameter.dtype != dtype:
                parameter.data = parameter.data.astype(dtype)
                parameter.grad = None  # a gradient of the old dtype would not fit the new parameter
        return self

    @property
    def dtype(self):
        """The dtype of the parameters (all share one)."""
        parameters = self.parameters()
        return parameters[0].dtype if parameters else np.dtype(np.float32)

    # ----- weights by name -----
    def state_dict(self):
        """`{name: array}` for every parameter. The arrays are the parameters' own (not copies), as in
        PyTorch: copy them before changing them if the model must not change too."""
        return {name: parameter.data for name, parameter in self.named_parameters()}

    def load_state_dict(self, state, strict=True):
        """Copy the arrays of `state` into the parameters of the same name (converted to their dtype).

        With strict=True, a name missing from `state`, a name the model does not have, or an array of the
        wrong shape raises a `CheckpointError` that lists them all. With strict=False, missing and unexpected
        names are allowed and returned as `(missing, unexpected)`; wrong shapes are still errors.
        """
        own = dict(self.named_parameters())
        missing = [name for name in own if name not in state]
        unexpected = [name for name in state if name not in own]
        misshaped = [f"{name}: checkpoint {tuple(np.shape(state[name]))}, model {own[name].shape}"
                     for name in own if name in state and tuple(np.shape(state[name])) != own[name].shape]
        problems = []
        if misshaped:
            problems.append("wrong shape: " + "; ".join(misshaped))
        if strict and missing:
            problems.append("missing: " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected: " + ", ".join(unexpected))
        if problems:
            raise CheckpointError(f"cannot load the weights into {type(self).__name__}: "
                                  + " | ".join(problems)
                                  + ". Check that the checkpoint was saved from a model with the same config")
        for name, parameter in own.items():
            if name in state:
                # Copy into the existing array: references held elsewhere (a tied head, an optimizer)
                # stay valid.
                parameter.data[...] = np.asarray(state[name], dtype=parameter.dtype)
        return missing, unexpected

    def __repr__(self):
        return f"{type(self).__name__}({self.num_parameters():,} parameters, {self.dtype})"


class ModuleList(Module):
    """A list of modules, registered under the names "0", "1", ... (HF's `encoder.layer.0`)."""

    def __init__(self, modules):
        super().__init__()
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]
