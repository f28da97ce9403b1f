"""One tokenizer for every task: Chinese by character, English by word and punctuation mark."""

from attnbook.tasks.vocab import join_tokens, tokenize


def test_tokenize_splits_english_words_and_punctuation_and_chinese_characters():
    assert tokenize("Tom cried, Mary ran.") == ["Tom", "cried", ",", "Mary", "ran", "."]
    assert tokenize("王芳哭了，她 很累") == [
        "王",
        "芳",
        "哭",
        "了",
        "，",
        "她",
        "很",
        "累",
    ]


def test_join_tokens_is_the_inverse_of_tokenize_on_spaced_text():
    for text in ["Tom cried , Mary ran .", "王芳哭了，她很累"]:
        assert join_tokens(tokenize(text)) == text
