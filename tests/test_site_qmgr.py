"""qmgr command files (``print server``, ``print sched``) read as qmgr reads them."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.shared.errors import SiteError
from replay.site.qmgr import Statement, parse_qmgr, qmgr_objects

DATA = os.path.join(os.path.dirname(__file__), "data", "site")


def read(folder, name="qmgr.txt"):
    with open(os.path.join(DATA, folder, name)) as handle:
        return handle.read()


def objects(text):
    return {(item.kind, item.name): item for item in qmgr_objects(parse_qmgr(text))}


def test_real_print_server_gives_the_queue_and_the_server():
    """The neutral server's print server: queue workq and the server's attributes, names in lower case."""
    found = objects(read("neutral"))
    assert sorted(found) == [("queue", "workq"), ("server", "")]
    assert found[("queue", "workq")].get("queue_type") == "Execution"
    assert found[("server", "")].get("scheduler_iteration") == "600"
    assert found[("server", "")].get("resources_default.ncpus") == "1"


def test_line_numbers_are_kept():
    """Each attribute keeps the line that set it."""
    server = objects(read("neutral"))[("server", "")]
    line = [a.line for a in server.attributes if a.name == "default_queue"][0]
    assert read("neutral").splitlines()[line - 1] == "set server default_queue = workq"


def test_list_values_written_with_plus_equals_are_joined():
    """print server writes a list one element per line (= then +=); the object holds them comma-joined."""
    found = objects(read("configured"))
    assert found[("queue", "express")].get("max_run") == "[o:PBS_ALL=10],[u:PBS_GENERIC=2],[u:ana=4]"
    assert found[("queue", "entry")].get("route_destinations") == "express,long"


def test_quoted_values_lose_their_quotes():
    """A value quoted because it holds spaces or commas comes back without the quotes."""
    found = objects(read("configured"))
    assert found[("server", "")].get("job_sort_formula") == "ncpus * 2 + walltime / 60"
    assert found[("sched", "default")].get("preempt_prio") == "express_queue, normal_jobs"


def test_priority_is_lower_case():
    """qmgr prints the queue attribute Priority capitalised; it is read as priority."""
    assert objects(read("configured"))[("queue", "express")].get("priority") == "200"


def test_resources_and_schedulers_are_objects():
    """create resource and create sched lines give objects of their own."""
    found = objects(read("configured"))
    assert found[("resource", "scratch")].get("type") == "size"
    assert found[("sched", "default")].get("opt_backfill_fuzzy") == "med"


def test_several_attributes_on_one_line_and_abbreviations():
    """qmgr's own shorthand: s q NAME a=1, b=2 sets two attributes of a queue."""
    found = objects("c q fast queue_type=e, Priority=5\ns q fast started = True, enabled=False\n")
    assert found[("queue", "fast")].get("queue_type") == "e"
    assert found[("queue", "fast")].get("started") == "True"
    assert found[("queue", "fast")].get("enabled") == "False"


def test_semicolons_comments_and_continuations():
    """; separates commands, # after white space starts a comment, a trailing backslash continues."""
    text = "set server a = 1; set server b = 2  # two\nset server \\\n c = 3\nset server d = x#y\n"
    server = objects(text)[("server", "")]
    assert [(a.name, a.value, a.line) for a in server.attributes] == [
        ("a", "1", 1), ("b", "2", 1), ("c", "3", 2), ("d", "x#y", 4)]


def test_a_named_server_is_the_server():
    """set server NAME a = 1 sets the one server's attribute."""
    assert objects("set server pbshost scheduling = True\n")[("server", "")].get("scheduling") == "True"


def test_dotted_node_names():
    """A node name with dots is a name, not an attribute with a resource."""
    found = objects("create node n1.example.org\nset node n1.example.org resources_available.ncpus = 4\n")
    assert found[("node", "n1.example.org")].get("resources_available.ncpus") == "4"


def test_unnamed_scheduler_is_the_default_one():
    """set sched without a name sets the default scheduler; a named one is another object."""
    found = objects("set sched opt_backfill_fuzzy = off\nset sched other scheduler_iteration = 30\n")
    assert found[("sched", "default")].get("opt_backfill_fuzzy") == "off"
    assert found[("sched", "other")].get("scheduler_iteration") == "30"


def test_entity_limits_keep_unquoted_spaces():
    """max_run values may hold spaces unquoted (qmgr allows white space in entity limits)."""
    statements = parse_qmgr("set server max_run = [u:PBS_GENERIC = 3]\n")
    assert statements == (Statement(1, "set", "server", "", "max_run", "=", "[u:PBS_GENERIC = 3]"),)


def test_unset_delete_and_minus_equals():
    """unset removes an attribute, delete an object, -= one element of a list."""
    text = ("create queue a\nset queue a acl_users = x\nset queue a acl_users += y\nset queue a acl_users -= x\n"
            "set queue a Priority = 3\nunset queue a Priority\ncreate queue b\ndelete queue b\n")
    found = objects(text)
    assert sorted(found) == [("queue", "a")]
    assert [(a.name, a.value) for a in found[("queue", "a")].attributes] == [("acl_users", "y")]


def test_hook_bodies_are_skipped():
    """print hook's base64 file body after 'import hook ... -' is skipped up to its blank line."""
    text = ("create hook h\nset hook h event = queuejob\nimport hook h application/x-python base64 -\n"
            "aW1wb3J0IHBicwo=\n\nset server a = 1\n")
    found = objects(text)
    assert found[("hook", "h")].get("event") == "queuejob"
    assert found[("server", "")].get("a") == "1"


@pytest.mark.parametrize("text, message", [
    ("set server\n", "qmgr.txt:1"),
    ("frobnicate server a = 1\n", "frobnicate"),
    ("set widget a = 1\n", "object type"),
    ("set queue started = True\n", "which queue"),
    ("set server a = \n", "a: no value"),
    ("set server a = 'open\n", "unclosed quote"),
    ("\n\nset server a = 1 2\n", "qmgr.txt:3: a"),
    ("list server\n", "not a command that configures"),
    ("Server pbshost\n    scheduling = True\n", "qmgr.txt:1: Server: not a qmgr command \\(expected the output"),
])
def test_malformed_lines_name_file_and_line(text, message):
    """A line qmgr would refuse gives one SiteError naming the file, the line and the setting."""
    with pytest.raises(SiteError, match=message):
        parse_qmgr(text)


_plain = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_:[]=/"),
                 min_size=1, max_size=12)
_any = st.text(st.characters(blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029;",
                             blacklist_categories=("Cs", "Cc")), max_size=20)


def print_quoted(value):
    """A value as qmgr's print writes it: quoted when it holds a space, comma or quote; ' if it holds "."""
    if not any(char in value for char in "\"' ,") and value:
        return value
    quote = "'" if '"' in value else '"'
    return quote + value + quote


def qmgr_can_read_back(value):
    """Whether qmgr itself reads back a value as print writes it: not both quotes, no unquoted ; (the end of a
    command), # at its start (a comment) or \\ at its end (a continued line)."""
    return (value.strip() and not ('"' in value and "'" in value) and not value.startswith("#")
            and not value.endswith("\\"))


@given(st.lists(_any.filter(qmgr_can_read_back), min_size=1, max_size=4))
def test_print_server_lists_read_back(elements):
    """Any list written the way print server writes it (quoted when needed, = then +=) reads back."""
    lines = ["set queue q acl_users {} {}".format("=" if i == 0 else "+=", print_quoted(element))
             for i, element in enumerate(elements)]
    queue = objects("create queue q\n" + "\n".join(lines) + "\n")[("queue", "q")]
    assert queue.get("acl_users") == ",".join(elements)


@given(_plain, _plain)
def test_unquoted_words_read_back(attribute, value):
    """An attribute set to an unquoted word reads back as that word, its name in lower case."""
    name = "a" + attribute.replace(":", "").replace("[", "").replace("]", "").replace("=", "").replace("/", "")
    server = objects("set server {} = {}\n".format(name, value))[("server", "")]
    assert server.get(name.lower()) == value
