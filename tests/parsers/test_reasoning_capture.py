from proofgym.parsers import JSONBlockParser


def test_first_reasoning_block_is_captured_stripped(parser, block):
    completion = f"<reasoning>\n first \n</reasoning><reasoning>second</reasoning>{block('deny')}"
    assert parser.parse(completion).claim.reasoning == "first"


def test_no_reasoning_block_gives_none(parser, block):
    assert parser.parse(block("deny")).claim.reasoning is None
    assert parser.parse(f"<reasoning>unterminated {block('deny')}").claim.reasoning is None


def test_reasoning_capture_can_be_disabled(block):
    parser = JSONBlockParser(reasoning_tag=None)
    assert parser.parse(f"<reasoning>x</reasoning>{block('deny')}").claim.reasoning is None


def test_reasoning_never_changes_the_rest_of_the_claim(parser, block):
    plain = parser.parse(block("permit", {"age": 3})).claim
    reasoned = parser.parse(f"<reasoning>It is clearly deny. age=99</reasoning>{block('permit', {'age': 3})}").claim
    assert reasoned.reasoning
    assert reasoned.key() == plain.key()


def test_lone_surrogates_in_reasoning_are_replaced(parser, block):
    claim = parser.parse(f"<reasoning>a\ud800b</reasoning>{block('deny')}").claim
    assert claim.reasoning == "a\ufffdb"  # the one rule for untrusted text: proofgym.core.model_text
