from attnbook.exercises.ch13_reading import check_last_place, check_supporting_share
from attnbook.tasks.stories import PLACES, last_place_rule, supporting_share


def last_place(story):
    """A right answer written by hand: the last place word of the story, or None."""
    places = [t for s in story.sentences for t in s if t in PLACES]
    return places[-1] if places else None


def test_a_rule_written_by_hand_passes():
    assert check_last_place(last_place).passed, str(check_last_place(last_place))


def test_the_library_rule_is_refused():
    report = check_last_place(last_place_rule)
    assert not report.passed and "calls last_place_rule" in str(report)


def test_last_word_of_the_last_sentence_is_caught():
    report = check_last_place(lambda story: story.sentences[-1][-2])
    assert not report.passed
    assert "object, not a place" in str(report)


def test_first_place_is_wrong():
    def first_place(story):
        return next((t for s in story.sentences for t in s if t in PLACES), None)

    assert not check_last_place(first_place).passed


def test_a_crashing_rule_is_reported():
    def crashes(story):
        raise RuntimeError("oops")

    report = check_last_place(crashes)
    assert not report.passed and "oops" in str(report)


def share(weights, sentence, supporting):
    """A right answer written by hand."""
    hit = (sentence[:, :, None] == supporting[:, None, :]) & (supporting >= 0)[:, None, :]
    return (weights * hit.any(-1)).sum(-1)


def test_a_share_written_by_hand_passes():
    assert check_supporting_share(share).passed


def test_the_library_share_is_refused():
    report = check_supporting_share(supporting_share)
    assert not report.passed and "calls supporting_share" in str(report)


def test_first_supporting_sentence_only_is_named():
    report = check_supporting_share(lambda w, s, sup: share(w, s, sup[:, :1]))
    assert not report.passed and "first supporting sentence only" in str(report)


def test_mean_instead_of_sum_is_named():
    def mean(weights, sentence, supporting):
        hit = (sentence[:, :, None] == supporting[:, None, :]).any(-1).float()
        return (weights * hit).sum(-1) / hit.sum(-1).clamp_min(1)

    report = check_supporting_share(mean)
    assert not report.passed and "SUM" in str(report), str(report)


def test_scalar_answer_is_refused():
    report = check_supporting_share(lambda w, s, sup: share(w, s, sup).mean())
    assert not report.passed and "shape" in str(report)


def test_in_place_edit_is_caught():
    def edits(weights, sentence, supporting):
        weights *= 1.0
        weights[:, 0] = 0.0
        return share(weights, sentence, supporting)

    report = check_supporting_share(edits)
    assert not report.passed


def test_counting_the_placeholder_as_a_sentence_is_named():
    # -1 ("no second sentence") matches the padding's -1: caught on a row with weight on padding
    def sloppy(weights, sentence, supporting):
        hit = (sentence[:, :, None] == supporting[:, None, :]).any(-1)
        return (weights * hit).sum(-1)

    report = check_supporting_share(sloppy)
    assert not report.passed and "padding" in str(report)


def test_counting_a_sentence_twice_is_named():
    def twice(weights, sentence, supporting):
        hit = (sentence[:, :, None] == supporting[:, None, :]) & (supporting >= 0)[:, None, :]
        return (weights[:, :, None] * hit).sum((1, 2))

    report = check_supporting_share(twice)
    assert not report.passed and "twice" in str(report)


def test_a_story_with_no_place_gets_the_none_hint_first():
    report = check_last_place(lambda story: story.sentences[-1][-2])
    assert "so the answer is None" in str(report)
