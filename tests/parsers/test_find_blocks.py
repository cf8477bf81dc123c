from proofgym.parsers import find_blocks


def test_returns_block_contents_in_order():
    assert find_blocks("a <t>1</t> b <t>2</t>", "t") == ["1", "2"]


def test_unterminated_block_is_ignored():
    assert find_blocks("<t>1</t><t>2", "t") == ["1"]
    assert find_blocks("<t>open", "t") == []


def test_block_starts_at_the_last_opening_tag_before_its_close():
    assert find_blocks("<t>prose <t>body</t>", "t") == ["body"]


def test_stray_closing_tags_are_ignored():
    assert find_blocks("</t></t><t>x</t></t>", "t") == ["x"]


def test_tags_match_case_insensitively_and_literally():
    assert find_blocks("<T>x</t>", "t") == ["x"]
    assert find_blocks("<a.b>x</a.b><aXb>y</aXb>", "a.b") == ["x"]
