"""Check your understanding (book/_ext/quizzes.py, assets/attnbook-quiz.js) on the built site, in
offline Chromium with no kernel: a wrong option shows why it is wrong, the right one says so, a
number is checked against its answer, in both editions and at a phone's width; without JavaScript
the question and its options still show. And every quiz on every page can be answered: one right
option (or one numeric answer), and feedback for every option."""

from __future__ import annotations

import re

import pytest
from conftest import SITE, site_pages
from test_readable import assert_no_serious_violations
from test_site import noise_free

FORM = re.compile(r'<form class="attnbook-quiz"[^>]*>.*?</form>', re.S)
LABELS = {
    "en": {"correct": "Correct.", "wrong": "Not quite.", "check": "Check"},
    "zh": {"correct": "答对了。", "wrong": "再想想。", "check": "核对"},
}
PREFIX = {"en": "", "zh": "zh/"}


def quizzes_on(page: str) -> list[str]:
    return FORM.findall((SITE / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_the_chapters_have_quizzes(edition):
    pages = [p for p in site_pages() if p.startswith(PREFIX[edition] + "book/")]
    assert sum(len(quizzes_on(p)) for p in pages) >= 2 * 2  # at least two chapters' worth


@pytest.mark.parametrize("page", [p for p in site_pages() if "/" in p])
def test_every_quiz_has_one_right_answer_and_feedback_for_every_option(page):
    for form in quizzes_on(page):
        name = re.search(r'id="(quiz-[^"]+)"', form).group(1)
        right = form.count('data-correct="true"')
        options = form.count('class="attnbook-quiz-option"')
        assert right == 1, f"{page} {name}: {right} right answers"
        assert form.count('class="attnbook-quiz-feedback" hidden') == options, name
        assert "<legend" in form and 'aria-live="polite"' in form, name
        if 'data-kind="number"' in form:
            float(re.search(r'data-answer="([^"]+)"', form).group(1))
        else:
            assert form.count('type="radio"') == options >= 2, name


def open_chapter(offline_page, site_url: str, edition: str, chapter: str, width: int):
    offline_page.page.set_viewport_size({"width": width, "height": 900})
    offline_page.page.goto(f"{site_url}/{PREFIX[edition]}book/{chapter}.html")
    offline_page.wait_until_quiet()
    return offline_page.page


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_wrong_option_explains_itself_and_the_right_one_says_correct(
    offline_page, site_url, edition, width
):
    page = open_chapter(offline_page, site_url, edition, "01_detective", width)
    form = page.locator("form.attnbook-quiz").first
    form.scroll_into_view_if_needed()
    result = form.locator(".attnbook-quiz-result")
    check = form.get_by_role("button", name=LABELS[edition]["check"])
    check.click()  # nothing chosen yet: a prompt, no verdict
    assert result.inner_text().strip() and LABELS[edition]["correct"] not in result.inner_text()

    wrong = form.locator("input[type=radio]:not([data-correct])").first
    form.locator(f'label[for="{wrong.get_attribute("id")}"]').click()
    check.click()
    feedback = wrong.locator("xpath=..").locator(".attnbook-quiz-feedback").text_content().strip()
    assert result.inner_text().startswith(LABELS[edition]["wrong"])
    assert feedback[:20] in result.inner_text()
    assert result.is_visible()

    right = form.locator("input[type=radio][data-correct]")
    form.locator(f'label[for="{right.get_attribute("id")}"]').click()
    assert result.inner_text() == ""  # a new choice clears the old verdict
    check.click()
    assert result.inner_text().startswith(LABELS[edition]["correct"])

    fits = page.evaluate(
        "f => f.scrollWidth <= f.clientWidth + 1 && "
        "document.documentElement.scrollWidth <= window.innerWidth + 1",
        form.element_handle(),
    )
    assert fits, f"the quiz is wider than the page at {width} px"
    assert noise_free(offline_page.errors) == [] and offline_page.blocked == []


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_number_is_checked_against_its_answer_and_its_common_mistakes(
    offline_page, site_url, edition
):
    page = open_chapter(offline_page, site_url, edition, "02_scaled_dot_product", 390)
    form = page.locator("form.attnbook-quiz[data-kind=number]").first
    field = form.get_by_label({"en": "Your answer", "zh": "你的答案"}[edition])
    result = form.locator(".attnbook-quiz-result")
    check = form.get_by_role("button", name=LABELS[edition]["check"])
    field.fill("0.5")
    check.click()
    assert result.inner_text().startswith(LABELS[edition]["wrong"])
    assert {"en": "standard deviation", "zh": "标准差"}[edition] in result.inner_text()
    field.fill("7")  # not listed: a plain "wrong"
    check.click()
    assert result.inner_text().startswith(LABELS[edition]["wrong"])
    field.fill(form.get_attribute("data-answer"))
    check.click()
    assert result.inner_text().startswith(LABELS[edition]["correct"])
    assert noise_free(offline_page.errors) == [] and offline_page.blocked == []


def test_without_javascript_the_question_and_options_show_and_the_answers_do_not(browser, site_url):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{site_url}/book/01_detective.html")
        form = page.locator("form.attnbook-quiz").first
        assert form.locator("legend").is_visible()
        assert form.locator("label").first.is_visible()
        assert not form.locator(".attnbook-quiz-feedback").first.is_visible()
        assert not form.locator(".attnbook-quiz-check").is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_an_answered_quiz_is_accessible_in_light_and_dark_mode(offline_page, site_url, theme):
    """axe-core on the quizzes once answered (feedback, colours of the verdict) in the theme's
    light and dark modes, at a phone's width."""
    offline_page.context.add_init_script(f"localStorage.setItem('mode', '{theme}')")
    page = open_chapter(offline_page, site_url, "zh", "02_scaled_dot_product", 390)
    assert page.evaluate("document.documentElement.dataset.theme") == theme
    forms = page.locator("form.attnbook-quiz")
    for i in range(forms.count()):
        form = forms.nth(i)
        if form.get_attribute("data-kind") == "number":
            form.locator("input[type=text]").fill("0.5")
        else:
            form.locator("label").first.click()
        form.locator(".attnbook-quiz-check").click()
        assert form.locator(".attnbook-quiz-result").inner_text()
    assert_no_serious_violations(page, f"quizzes ({theme})", "'form.attnbook-quiz'")
