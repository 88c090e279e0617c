"""When search answers, asks or abstains: the rules, each on a small hand-made store."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ihmt_navigator import Navigator
from ihmt_store import Store, estimate_tokens
from ihmt_store.testing import make_leaf


def _put(store: Store, text: str, *, project: str = "", when: str = "2025-01-01") -> str:
    position = store.count() + 1
    leaf = make_leaf(text, timestamp=when, position=position, project=project)
    return store.put_leaf(leaf).leaf_id


def test_many_memories_about_one_person_answer_found_not_ambiguous(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    birthday = _put(store, "Caroline Webb's birthday is on 4 March; she likes orchids.")
    _put(store, "Caroline Webb moved to the data team in May.")
    _put(store, "Caroline Webb reviews every schema migration.")
    result = Navigator(store).search("When is Caroline's birthday?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == birthday
    assert len(result.results) == 3  # the others are listed, not asked about


def test_a_first_name_shared_by_different_people_is_ambiguous(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    ids = {
        _put(store, "Tomas Lindqvist is the CTO; he approves tax changes."),
        _put(store, "Tomas Okafor chairs the chess club."),
        _put(store, "Tomas Brennan is my brother-in-law in Leeds."),
    }
    result = Navigator(store).search("Who is Tomas?")
    assert result.status == "ambiguous"
    assert {h.id for h in result.results} == ids
    assert all(h.content for h in result.results)
    # one chance in three that the first is the one meant, at best
    assert 0 < result.confidence <= 0.33


def test_asked_in_a_project_its_memory_comes_before_a_general_one_as_good(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    general = _put(store, "Every pull request says how to test it.")
    falcon = _put(
        store,
        "falcon tests use pytest with fixtures in conftest.py; CI splits them across "
        "four workers and retries a flaky one once.",
        project="falcon",
    )
    nav = Navigator(store)
    here = nav.search("how are the tests run here?", prefer_project="falcon")
    assert here.best is not None and here.best.id == falcon
    anywhere = nav.search("how are the tests run here?")
    assert anywhere.best is not None and anywhere.best.id == general


def test_a_practice_each_project_has_is_ambiguous_asked_in_none(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    falcon = _put(
        store,
        "falcon lint: ruff with the default rules; CI fails on any finding.",
        project="falcon",
    )
    heron = _put(
        store, "heron formatting: prettier on save, and eslint as the lint step.", project="heron"
    )
    kite = _put(store, "kite checks formatting with gofmt in a pre-commit hook.", project="kite")
    photos = _put(
        store, "heron's photo bucket has CORS open to the app's domain only.", project="heron"
    )
    _put(store, "falcon stores its build cache in a bucket.", project="falcon")
    _put(store, "kite's CORS rules are set in the gateway.", project="kite")
    _put(store, "owl resizes every photo on upload.", project="owl")
    nav = Navigator(store)
    practice = nav.search("Which lint and formatting tools do we use?")
    assert practice.status == "ambiguous"
    assert {falcon, heron, kite} <= {h.id for h in practice.results}
    # each word is held elsewhere, one by one: only one project holds them together
    specific = nav.search("Where is the CORS setup of the photo bucket?")
    assert specific.status == "found"
    assert specific.best is not None and specific.best.id == photos
    # asked in a project, it is that project's practice
    here = nav.search("Which lint and formatting tools do we use?", prefer_project="heron")
    assert here.best is not None and here.best.id == heron


def test_projects_that_each_answer_a_question_asked_in_none_are_ambiguous(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    falcon = _put(
        store, "falcon: run the tests with `make test` inside the dev container.", project="falcon"
    )
    heron = _put(store, "heron: run the tests with `cargo nextest run`.", project="heron")
    nav = Navigator(store)
    asked_nowhere = nav.search("How do I run the tests?")
    assert asked_nowhere.status == "ambiguous"
    assert {h.id for h in asked_nowhere.results} == {falcon, heron}
    # inside a project, or naming one, there is nothing to ask
    inside = nav.search("How do I run the tests?", prefer_project="heron")
    assert inside.status == "found" and inside.best is not None and inside.best.id == heron
    named = nav.search("How do I run the falcon tests?")
    assert named.status == "found" and named.best is not None and named.best.id == falcon


def test_the_current_projects_memory_comes_before_another_that_holds_no_more_of_the_question(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch", project="")
    mine = _put(store, "Crash reports go to GlitchTip for the web app.", project="falcon")
    theirs = _put(
        store, "Crash reports go to Bugsnag; crash reports reach Slack too.", project="heron"
    )
    nav = Navigator(store)
    result = nav.search("where do crash reports go?", prefer_project="falcon")
    assert result.best is not None and result.best.id == mine
    assert [h.id for h in result.results[:2]] == [mine, theirs]


def test_the_newer_of_two_statements_about_the_same_thing_comes_first(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _put(store, "heron runs Django 4.2 LTS with Python 3.11.", project="heron", when="2023-05-01")
    newer = _put(
        store, "heron runs Django 5.2 LTS with Python 3.13.", project="heron", when="2025-04-15"
    )
    _put(store, "heron uses Celery for background jobs.", project="heron", when="2024-01-01")
    result = Navigator(store).search("Which Django and Python is heron on?", prefer_project="heron")
    assert result.status == "found"
    assert result.best is not None and result.best.id == newer


def test_every_hit_carries_its_text(make_store: Callable[..., Store]) -> None:
    store = make_store()
    for n in range(4):
        _put(store, f"kite release note {n}: shipped feature {n}", project="kite")
    result = Navigator(store).search("kite release notes")
    assert len(result.results) == 4
    assert all(h.content.startswith("kite release note") for h in result.results)
    assert result.leaf_reads == 4


def test_a_broad_question_about_a_name_shared_by_different_people_is_ambiguous(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(store, "Luis Marín reviews the invoices module.")
    _put(store, "Luis Pardo is my cousin in Valencia.")
    result = Navigator(store).search("What do we know about Luis?")
    assert result.status == "ambiguous" and len(result.results) == 2


def test_an_older_statement_of_the_same_thing_is_flagged_in_the_answer_only(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    older = _put(
        store, "heron runs Django 4.2 LTS with Python 3.11.", project="heron", when="2023-05-01"
    )
    newer = _put(
        store, "heron runs Django 5.2 LTS with Python 3.13.", project="heron", when="2025-04-15"
    )
    other = _put(
        store,
        "heron's Django admin is only reachable over the VPN; Python scripts use the API.",
        project="heron",
        when="2024-01-01",
    )
    result = Navigator(store).search("Which Django and Python is heron on?", prefer_project="heron")
    by_id = {h.id: h for h in result.results}
    assert result.best is not None and result.best.id == newer
    assert by_id[older].outdated and by_id[older].outdated_by == newer
    assert any(n.startswith("PROBABLY OUTDATED") and older in n for n in result.notices)
    assert other not in by_id or not by_id[other].outdated
    # inferred for the answer only: the store holds no correction
    entry = store.entry(older)
    assert entry is not None and entry.outdated_by is None


def test_a_name_shared_by_different_people_is_asked_about_even_if_one_matches_better(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    holm = _put(store, "Greta Holm is the accountant; her email is greta@example.com.")
    sala = _put(store, "Greta Sala designs the app screens.")
    result = Navigator(store).search("What's Greta's email address?")
    assert result.status == "ambiguous"
    assert {h.id for h in result.results} == {holm, sala}


def test_a_namesake_far_down_the_list_still_makes_a_bare_name_ambiguous(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(14):
        _put(store, f"Ines: release {n} ok.")
    founder = _put(
        store, "Ines Varga founded the studio in 2019 with two friends from her first job."
    )
    client = _put(
        store, "Ines Kowal is the client's product owner and approves every change to fees."
    )
    result = Navigator(store).search("Who is Ines?")
    assert result.status == "ambiguous"
    assert {founder, client} <= {h.id for h in result.results}


def test_the_rest_of_the_question_can_single_out_one_namesake(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    cat = _put(store, "Luis Marín adopted a grey cat called Pixel.")
    _put(store, "Luis Pardo is my cousin in Valencia; Luis Pardo has a cat allergy.")
    nav = Navigator(store)
    result = nav.search("What is Luis's cat called?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == cat
    # a value every person has does not single one out
    _put(store, "Luis Pardo's email is luis@example.org.")
    assert nav.search("What's Luis's email address?").status == "ambiguous"


def test_a_product_followed_by_capitalised_words_is_not_several_people(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(store, "The signup form is built with Orbit Widgets; our own widgets wrap them.")
    _put(store, "Orbit Themes give the app its dark mode; the themes live in styles/.")
    result = Navigator(store).search("What do we use Orbit for?")
    assert result.status == "found"


def test_the_newest_version_of_a_thing_answers_and_older_ones_are_flagged(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch", project="kite")
    older = _put(
        store,
        "kite moved to Gradle 7.6 and the version catalog; buildSrc is gone.",
        project="kite",
        when="2023-03-01",
    )
    newer = _put(store, "kite is on Gradle 8.5 now.", project="kite", when="2025-02-01")
    vaguer = _put(
        store,
        "We agreed to stay on Gradle 8 in kite: the move to Quarry is not worth it.",
        project="kite",
        when="2026-01-10",
    )
    result = Navigator(store).search("Which Gradle version is kite on?", prefer_project="kite")
    by_id = {h.id: h for h in result.results}
    assert result.best is not None and result.best.id == newer
    assert by_id[older].outdated and by_id[older].outdated_by == newer
    assert vaguer not in by_id or not by_id[vaguer].outdated


def test_a_newer_version_of_something_else_does_not_answer(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    staging = _put(store, "The staging database runs Postgres 14.9.", when="2023-01-01")
    _put(store, "The prod database runs Postgres 16.2 since the upgrade.", when="2025-01-01")
    result = Navigator(store).search("Which Postgres version does the staging database run?")
    assert result.best is not None and result.best.id == staging
    assert not any(h.outdated for h in result.results)


def test_a_memory_about_another_named_thing_does_not_answer(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    orbaz = _put(store, "Decision for Orbaz: use Redis for the rate limiter, for its TTLs.")
    _put(store, "Decision for Kelmo: use Kafka for the event bus, for replay.")
    _put(store, "The kite CLI parses its flags with clap.")
    _put(store, "Rust is pinned to 1.80 on the build machines.")
    nav = Navigator(store)
    other = nav.search("What did we decide to use for the rate limiter in Kelmo, and why?")
    assert other.status == "not_found" and other.results == ()
    # Kelmo's own memory comes first (it names what is asked about), and holds nothing
    # else of the question
    assert "shares only 'kelmo'" in other.compact
    assert orbaz in other.compact  # the closest memory, listed as not an answer
    named = nav.search("What did we decide to use for the rate limiter in Orbaz, and why?")
    assert named.best is not None and named.best.id == orbaz
    # a name that describes something else ("the Rust CLI") is not what it is about
    described = nav.search("How does the Rust CLI parse its flags?")
    assert described.status == "found"


@pytest.mark.parametrize(
    "address", ["wss://orbit.example.cl/socket", "orbit.example.cl/socket", "status.orbit.ie"]
)
def test_a_web_address_of_any_scheme_or_country_answers_a_url_question(
    make_store: Callable[..., Store], address: str
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    socket = _put(store, f"The orbit rider app connects to {address} for live updates.")
    result = Navigator(store).search("What's the URL the orbit rider app connects to?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == socket


def test_a_question_asking_for_an_email_is_not_answered_by_a_memory_without_one(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(store, "Nora Vidal is the new CTO and signs off on tax changes.")
    _put(store, "Greta Holm reports invoicing bugs; her email is greta@example.com.")
    nav = Navigator(store)
    result = nav.search("What's Nora Vidal's email address?")
    assert result.status == "not_found" and result.results == ()
    assert "none holds an email address" in result.compact
    # asked about what the memory does hold, it answers
    assert nav.search("What is Nora Vidal's role?").status == "found"
    # a yes/no question asks for no value
    assert nav.search("Does Nora Vidal have an email address?").status == "found"


def test_a_memory_naming_what_the_question_is_about_beats_a_rarer_word(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    for tool in ("Redis", "Kafka", "Vitest"):
        _put(store, f"Osk picked {tool} for its queue to trim the cloud spend.")
    for part in ("login page", "export tool", "admin panel", "docs site", "test runner"):
        _put(store, f"Quill weekly sync: the {part} needs more work.")
    home = _put(store, "Quill is deployed to AWS eu-west-1; its repository is quill-app.")
    result = Navigator(store).search("Which cloud region hosts Quill?")
    assert result.status == "found" and result.best is not None and result.best.id == home


def test_a_two_letter_name_no_memory_holds_is_not_found(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(store, "kite's remote build cache is in the cloud; its settings live in cache.toml.")
    nav = Navigator(store)
    unknown = nav.search("Where are the Nx remote cache settings of kite?")
    assert unknown.status == "not_found" and "Nx" in unknown.compact
    assert nav.search("Where are the remote cache settings of kite?").status == "found"


def test_how_often_how_long_and_when_need_a_memory_giving_that_value(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(store, "The lab's door sensors are serviced by Ada, who set them up.")
    _put(store, "Ada's son Theo moved to the swim club in May 2021; his class is at 17:30.")
    nav = Navigator(store)
    often = nav.search("How often are the door sensors serviced?")
    assert often.status == "not_found" and "none holds a frequency" in often.compact
    assert nav.search("When is Theo's birthday?").status == "not_found"
    # what the memories do give is answered
    assert nav.search("What time is Theo's swim class?").status == "found"
    _put(store, "The door sensors are serviced every six months.")
    assert nav.search("How often are the door sensors serviced?").status == "found"


def test_the_memory_that_holds_the_asked_for_value_comes_first_among_equals(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(store, "kite staging: deploys go out every Tuesday after the standup meeting.")
    url = _put(store, "kite staging is https://staging.kite.example.org behind basic auth.")
    result = Navigator(store).search("What's the kite staging URL?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == url


def test_a_port_question_needs_a_number(make_store: Callable[..., Store]) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(store, "Moved kite's Celery broker from Redis to Amazon SQS after a failover.")
    nav = Navigator(store)
    assert nav.search("What port does kite's Redis listen on?").status == "not_found"
    _put(store, "Inside the VPC, kite's Redis listens on port 6380.")
    answer = nav.search("What port does kite's Redis listen on?")
    assert answer.status == "found" and "6380" in answer.best.content  # type: ignore[union-attr]


def test_the_value_of_a_secret_is_never_an_answer_but_where_it_is_kept_is(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    kept = _put(store, "The kite Stadia API key is kept in Keeper Cloud under 'kite maps'.")
    nav = Navigator(store)
    value = nav.search("What's kite's Stadia API key?")
    assert value.status == "not_found" and "secrets are never saved" in value.compact
    where = nav.search("Where is the kite Stadia API key kept?")
    assert where.status == "found" and where.best is not None and where.best.id == kept


def test_another_projects_memory_holding_more_ordinary_words_stays_below_an_in_scope_answer(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(6):
        _put(store, f"filler note {n} about lunch")
    _put(
        store,
        "crash reports of heron go to Bugsnag; crash reports reach Slack too.",
        project="heron",
    )
    _put(store, "crash dumps of the osprey box are kept for a week.", project="heron")
    mine = _put(store, "falcon error reports go to GlitchTip, self-hosted.", project="falcon")
    nav = Navigator(store)
    result = nav.search("where do crash reports go?", prefer_project="falcon")
    assert result.best is not None and result.best.id == mine
    # a word only another project's memory holds points at it
    pointed = nav.search("where do osprey crash dumps go?", prefer_project="falcon")
    assert pointed.best is not None and pointed.best.project == "heron"


def test_a_memory_holding_only_part_of_an_identifier_does_not_cover_it(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(30):
        _put(store, f"Setup detail: box {n} got a data disk (ticket DATA-90{n:03}).")
    tracked = _put(store, "The worker pool moved to PostgreSQL 16; tracked in DATA-47142.")
    result = Navigator(store).search("What do we know about ticket DATA-47142?")
    assert result.best is not None and result.best.id == tracked


def test_a_broad_question_is_about_its_subject_not_how_it_is_asked(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(40):
        _put(store, f"filler note {n} about lunch")
    eks = {
        _put(store, "heron moved onto EKS with Karpenter for nodes."),
        _put(store, "kubectl for prod: aws eks update-kubeconfig --name heron-eks-prod."),
        _put(store, "EKS upgrade to 1.31 went through a blue/green node group."),
    }
    result = Navigator(store).search("Summarize the EKS setup.")
    assert result.status == "found" and result.broad
    assert {h.id for h in result.results} == eks


def test_a_longer_memory_of_another_project_still_splits_a_question_asked_in_none(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(30):
        _put(store, f"filler note {n} about lunch")
    short = _put(store, "falcon is on Python 3.11.", project="falcon")
    long = _put(
        store,
        "heron is now on PyTorch 2.5 / CUDA 12.4 / Python 3.12, with uv instead of conda.",
        project="heron",
    )
    result = Navigator(store).search("Which Python version are we on?")
    assert result.status == "ambiguous"
    assert {h.id for h in result.results} == {short, long}


def test_a_period_in_the_question_prefers_memories_dated_in_it(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(30):
        _put(store, f"filler note {n} about lunch")
    _put(
        store, "Duplicate invoices: a retry storm sent two invoices to 12 firms.", when="2022-09-01"
    )
    april = _put(
        store, "Duplicate invoices went out after two beat schedulers ran.", when="2023-04-04"
    )
    result = Navigator(store).search("What caused the duplicate invoices in April 2023?")
    assert result.best is not None and result.best.id == april
    # with as_of, the period says what held then, not when it was written
    then = Navigator(store).search(
        "What caused the duplicate invoices in April 2023?", as_of="2023-04-30"
    )
    assert then.status == "found"


@pytest.mark.parametrize(
    ("question", "span"),
    [
        ("Who was my manager in mid-2024?", ("2024-05-01", "2024-08-31")),
        ("What broke in April 2023?", ("2023-04-01", "2023-04-30")),
        ("Where was I living at the end of 2024?", ("2024-10-01", "2024-12-31")),
        ("¿Quién era el dueño de producto a finales de 2023?", ("2023-09-01", "2023-12-31")),
        ("What changed in 2022?", ("2022-01-01", "2022-12-31")),
        ("What was the bug in osprey 2.7.1?", None),
    ],
)
def test_the_period_a_question_names(question: str, span: tuple[str, str] | None) -> None:
    from ihmt_navigator._question import time_span

    assert time_span(question)[0] == span


def test_a_version_question_is_answered_only_by_a_memory_naming_the_thing(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(30):
        _put(store, f"filler note {n} about lunch")
    _put(store, "kite's rust-toolchain.toml now pins 1.84.0.", project="kite")
    _put(store, "rig-7's GPU capped at 300 W with nvidia-smi -pl 300.", project="lab")
    nav = Navigator(store)
    pinned = nav.search("What Rust version is kite's toolchain pinned to?")
    assert pinned.status == "found" and "1.84.0" in pinned.best.content  # type: ignore[union-attr]
    assert nav.search("Which Redis version does kite depend on?").status == "not_found"
    driver = nav.search("Which NVIDIA driver version is installed on rig-7?")
    assert driver.status == "not_found" and "driver version" in driver.compact


def test_how_old_needs_an_age_or_a_birth_date(make_store: Callable[..., Store]) -> None:
    store = make_store()
    for n in range(30):
        _put(store, f"filler note {n} about lunch")
    _put(store, "The old ThinkPad became the test machine.")
    nav = Navigator(store)
    assert nav.search("How old is the ThinkPad?").status == "not_found"
    _put(store, "The ThinkPad was bought in 2019, so it is 6 years old now.")
    assert nav.search("How old is the ThinkPad?").status == "found"


def test_a_modest_answer_is_found_and_says_its_confidence_is_low(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(30):
        _put(store, f"filler note {n} about lunch")
    _put(store, "leafnet run names follow <model>-<size>-<yyyymmdd>.", project="crop")
    _put(store, "Start a leafnet training run with python -m leafnet.train.", project="crop")
    result = Navigator(store).search("What's the naming scheme for leafnet training runs?")
    assert result.status == "found" and len(result.results) == 2
    assert result.confidence < 0.4
    assert "Low confidence" in result.compact


def test_asked_in_a_project_another_projects_memory_is_listed_not_given_as_the_answer(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(30):
        _put(store, f"filler note {n} about lunch")
    _put(store, "osprey CI fails on any clippy warning; run cargo fmt too.", project="osprey")
    theirs = _put(
        store, "Dropped black: ruff format does the formatting and the lint now.", project="heron"
    )
    _put(store, "wren lint and formatting: ktlint through Spotless.", project="wren")
    nav = Navigator(store)
    result = nav.search("what's the lint and formatting setup?", prefer_project="osprey")
    assert result.status == "not_found" and result.results == ()
    assert "for project osprey" in result.compact and theirs in result.compact
    assert "project heron" in result.compact
    # asked in that project, or naming it, it answers
    assert nav.search("what's the lint and formatting setup?", prefer_project="heron").best
    named = nav.search("what's the heron lint and formatting setup?", prefer_project="osprey")
    assert named.best is not None and named.best.id == theirs


def test_a_huge_question_is_not_echoed_whole(make_store: Callable[..., Store]) -> None:
    store = make_store()
    _put(store, "a memory about lunch")
    result = Navigator(store).search("zebra " * 50_000)
    assert result.status == "not_found" and len(result.compact) < 1_000


def test_a_memory_holding_the_identifier_the_question_names_answers_it(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(40):
        _put(store, f"filler note {n} about lunch")
    decision = _put(store, "Larch goes Typesense for search; recorded in ADR-40512.")
    result = Navigator(store).search("Summarise the call made with the vendor in ADR-40512.")
    assert result.status == "found"
    assert result.best is not None and result.best.id == decision


def test_a_date_is_not_the_phone_number_asked_for(make_store: Callable[..., Store]) -> None:
    store = make_store()
    _put(store, "Maren Holt is my cousin in Bergen; she teaches chemistry.")
    _put(store, "Maren and Olav land in Oslo on 2027-01-10 and stay until 14/02/2027.")
    result = Navigator(store).search("What's Maren's phone number?")
    assert result.status == "not_found"
    assert "phone number" in result.compact


def test_a_memory_holding_the_value_asked_for_answers_though_it_lacks_the_word(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    printer = _put(store, "The office printer is a Brother HL-L2350DW on 10.0.4.17.")
    nav = Navigator(store)
    for question in ("what's the printer's IP?", "What is the IP of the office printer?"):
        result = nav.search(question)
        assert result.status == "found", (question, result.compact)
        assert result.best is not None and result.best.id == printer
    # The value alone answers nothing: the question must be about the memory's subject.
    assert nav.search("What is the IP of the staging database?").status == "not_found"


def test_the_value_asked_for_is_found_in_a_memory_ranked_below_the_first(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _put(store, "The Grafana dashboard for the billing team lives in the ops folder.")
    holder = _put(store, "Grafana for billing: https://grafana.internal/d/billing")
    result = Navigator(store).search("What is the URL of the billing Grafana dashboard?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == holder


def test_a_host_name_the_question_names_is_never_a_stray_match(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n in range(5):
        _put(store, f"Environment: host edge-{n}x runs Ubuntu 22.04; nightly backups at 0{n}:00.")
    host = _put(store, "Environment: host cache-dove-20 runs FreeBSD 14 with .NET 8.")
    result = Navigator(store).search("What operating system is installed on cache-dove-20?")
    assert result.status == "found", result.compact
    assert result.best is not None and result.best.id == host


@pytest.mark.parametrize(
    ("question", "asks_for_a_name"),
    [
        ("How should I handle commit messages when working on falcon?", False),
        ("How do we handle retries?", False),
        ("What is Ana's GitHub handle?", True),
        ("What's her handle on Slack?", True),
    ],
)
def test_handle_asks_for_a_user_name_only_as_a_noun(question: str, asks_for_a_name: bool) -> None:
    from ihmt_navigator._question import asked_for

    names = [name for name, _ in asked_for(question)]
    assert ("a user name" in names) is asks_for_a_name


def test_a_phone_extension_is_not_asked_as_a_phone_number(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    barnaby = _put(store, "Barnaby Alcedo is the mobile developer; reach them on extension 3679.")
    result = Navigator(store).search("What is Barnaby's phone extension?")
    assert result.status == "found", result.compact
    assert result.best is not None and result.best.id == barnaby


def test_a_host_name_no_memory_holds_whole_is_not_found(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _put(store, "Environment: host cache-dove-20 runs FreeBSD 14; SSH listens on port 28167.")
    _put(store, "Environment: host edge-koala-66 runs Alpine 3.19; SSH listens on port 44061.")
    _put(store, "Environment: host ci-moose-19 runs Debian 12; SSH listens on port 61742.")
    result = Navigator(store).search("Which OS runs on cache-koala-19, and what is its SSH port?")
    assert result.status == "not_found"
    assert "cache-koala-19" in result.compact


def test_not_found_lists_the_two_closest_memories_as_not_an_answer(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    printer = _put(store, "The office printer is a Brother HL-L2350DW on 10.0.4.17.")
    host = _put(
        store, "Environment: host cache-dove-20 runs FreeBSD 14; SSH listens on port 28167."
    )
    _put(store, "Lunch on Fridays is at the Thai place on Calle Sueca.", when="2024-01-01")
    result = Navigator(store).search("Which port does the office router's admin page use?")
    assert result.status == "not_found" and result.results == ()
    listed = result.compact.split("Closest memories, not an answer:\n", 1)[1].splitlines()
    assert len(listed) == 2 and {printer, host} >= {line.rsplit("(", 1)[1][:-1] for line in listed}
    assert estimate_tokens("Closest memories, not an answer:\n" + "\n".join(listed)) <= 60


def test_a_value_of_someone_the_question_does_not_name_is_no_answer(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _put(store, "Ravi Menon joined as the studio's Rails developer in March.")
    _put(store, "quayside's mail goes out via Postmark (from noreply@quayside.ie).")
    assert Navigator(store).search("What's Ravi's email address?").status == "not_found"


def test_a_time_of_day_is_not_the_port_asked_for(make_store: Callable[..., Store]) -> None:
    store = make_store()
    _put(store, "quayside reindexes Typesense every night at 03:00 (cron on the worker).")
    assert Navigator(store).search("Which port does Typesense listen on?").status == "not_found"


def test_a_birthday_question_needs_a_date(make_store: Callable[..., Store]) -> None:
    store = make_store()
    _put(store, "Milo moved to Riverside with Nora and Tom.")
    assert Navigator(store).search("When is Milo's birthday?").status == "not_found"
    born = _put(store, "Milo's birthday is on 14 March; he wants a bike.")
    result = Navigator(store).search("When is Milo's birthday?")
    assert result.status == "found" and result.best is not None and result.best.id == born


def test_the_value_asked_for_is_found_in_a_memory_about_part_of_the_subject(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n, suite in enumerate(("unit", "lint", "e2e", "perf", "smoke", "fuzz")):
        _put(store, f"The IP of test box {n} is 10.9.{n}.1 and it runs the {suite} suite.")
    _put(store, "The nightly build server runs Ubuntu 22.04 and builds the mobile images.")
    holder = _put(store, "Network notes: the build server answers on 10.2.3.4.")
    result = Navigator(store).search("What is the IP of the nightly build server?")
    assert result.status == "found", result.compact
    assert result.best is not None and result.best.id == holder
    # Memories holding an IP but about something else do not answer for the subject.
    missing = Navigator(store).search("What is the IP of the nightly backup server?")
    assert missing.best is None or missing.best.id != holder


def test_a_word_found_only_inside_a_product_name_does_not_answer(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _put(store, "Our search runs on OpenSearch 2.11 in the eu-west cluster.")
    _put(store, "The admin panel is written in JavaScript and talks to the billing service.")
    _put(store, "The coffee machine on floor two needs descaling every month.")
    _put(store, "Deploys to production need a green pipeline and one approval.")
    nav = Navigator(store)
    never = nav.search("Which open source license covers the search cluster?")
    assert never.status == "not_found", never.compact
    assert nav.search("Which search engine runs in the cluster?").status == "found"
    assert nav.search("Which language is the admin panel written in?").status == "found"


def test_a_memory_saved_in_a_project_holds_the_project_the_question_names(
    make_store: Callable[..., Store],
) -> None:
    # Said inside orbit, the memory does not repeat its name; asked from anywhere, the
    # question names it: the project is what the memory is about.
    store = make_store()
    for n in range(20):
        _put(store, f"filler note {n} about lunch and the weekly standup")
    _put(store, "orbit's CI runs on GitHub Actions with Node 18 and 20.", project="orbit")
    _put(store, "heron moved to npm workspaces; pnpm was tried and dropped.", project="heron")
    mine = _put(store, "Use pnpm in this repo, never npm: the lockfile is pnpm's.", project="orbit")
    result = Navigator(store).search("Does orbit use pnpm or npm?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == mine
    assert "orbit" in result.best.matched and result.signals["lacking_name"] == 0.0
    # Another project's memory does not hold orbit's name.
    other = Navigator(store).search("Did orbit drop pnpm for npm workspaces?")
    assert [h.id for h in other.results if "orbit" in h.matched] == [
        h.id for h in other.results if h.project == "orbit"
    ]
