"""The words of :mod:`attnbook.tasks.coref`: names by gender, actions with the clause that cues
each one, fillers and function words, in English and Chinese."""

from __future__ import annotations

__all__ = ["LEXICON", "gender_of"]

#: Per language — names by gender, verbs with the clause that cues each one, fillers, function words.
LEXICON: dict[str, dict] = {
    "en": {
        "male": ["Tom", "John", "Jack", "Sam", "Paul", "Mark", "Ben", "Luke"],
        "female": ["Mary", "Anna", "Lucy", "Emma", "Kate", "Jane", "Rose", "Lily"],
        "pronoun": {"male": "he", "female": "she"},
        # verb -> what its doer did later (the cue that follows the pronoun)
        "verbs": {
            "cried": "dried the tears",
            "laughed": "told the joke again",
            "ran": "was out of breath",
            "ate": "was full",
            "sang": "had a sore throat",
            "slept": "woke up late",
        },
        "openers": ["yesterday", "this morning", "at the party", "after work"],
        "adverbs": ["suddenly", "quietly", "also"],  # between a name and its verb
        "later": ["later", "then", "afterwards"],
        "comma": ",",
        "and": "and",
        "stop": ".",
    },
    "zh": {
        "surnames": list("张王李刘陈杨赵黄"),
        "male": list("伟强军勇杰磊斌刚"),
        "female": list("芳丽娜敏静燕霞玲"),
        "pronoun": {"male": "他", "female": "她"},
        "verbs": {
            "哭了": "擦了擦眼泪",
            "笑了": "又讲了个段子",
            "跑了": "喘不过气来",
            "吃了": "饱得不想动",
            "唱了": "嗓子哑了",
            "睡了": "醒得很晚",
        },
        "openers": ["昨天", "今天早上", "在聚会上", "下班后"],
        "adverbs": ["突然", "也", "在家"],
        "later": ["后来", "然后", "接着"],
        "comma": "，",
        "and": None,
        "stop": "。",
    },
}


def gender_of(language: str, token: str) -> str:
    """``"male"`` or ``"female"``: the gender of a name token or a pronoun of ``language``."""
    lex = LEXICON[language]
    if token in lex["male"] or token == lex["pronoun"]["male"]:
        return "male"
    if token in lex["female"] or token == lex["pronoun"]["female"]:
        return "female"
    raise ValueError(f"{token!r} is neither a name nor a pronoun of language {language!r}")
