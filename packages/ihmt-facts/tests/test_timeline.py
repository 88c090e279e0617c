from __future__ import annotations

from datetime import date, datetime, timezone
from typing import TYPE_CHECKING

from ihmt_facts import FactStatus, Outcome, Timeline
from ihmt_store import Store
from ihmt_store.testing import make_leaf

if TYPE_CHECKING:
    from conftest import PutLeaf

SEED_NOTICE = (
    "On 2024-03-11 you said user location = 'Madrid', but on 2026-02-03 you updated to 'Valencia'."
)


# ------------------------------------------------------------------ the seed's story
def test_seed_story_madrid_then_valencia_end_to_end(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    madrid = put("I live in Madrid, near Retiro park.", "2024-03-11")
    (first,) = timeline.ingest(madrid)
    assert first.outcome is Outcome.NEW
    valencia = put("Big news: I moved to Valencia now.", "2026-02-03")

    (second,) = timeline.ingest(valencia)

    assert second.outcome is Outcome.CHANGED
    assert second.notices == (SEED_NOTICE,)
    active = timeline.active("user", "location")
    assert active is not None and active.value == "Valencia"
    assert active.status is FactStatus.ACTIVE and active.valid_to is None
    then = timeline.at("2024-12-31", "user", "location")
    assert then is not None and then.value == "Madrid"
    assert then.status is FactStatus.HISTORICAL
    assert (then.valid_from, then.valid_to) == ("2024-03-11T00:00:00Z", "2026-02-03T00:00:00Z")
    assert then.superseded_by == valencia.leaf_id
    assert [c.notice for c in timeline.contradictions()] == [SEED_NOTICE]
    # the Madrid leaf is annotated through the store, with the notice as its reason
    entry = store.entry(madrid.leaf_id)
    assert entry is not None and entry.status == "outdated"
    assert entry.outdated_by == valencia.leaf_id
    correction = store.read_leaf(madrid.leaf_id).outdated_by
    assert correction is not None and correction.reason == SEED_NOTICE
    assert [e.id for e in store.corrections_of(valencia.leaf_id)] == [madrid.leaf_id]
    # the leaf's text is untouched: it stays a record of its own date
    assert store.read_leaf(madrid.leaf_id).text == "I live in Madrid, near Retiro park."


def test_seed_story_through_record_fact_and_key_queries(store: Store, timeline: Timeline) -> None:
    timeline.record_fact("user", "location", "Madrid", timestamp="2024-03-11")
    recorded = timeline.record_fact("user", "location", "Valencia", timestamp="2026-02-03")

    assert recorded.notices == (SEED_NOTICE,)
    active = timeline.active_state("user::location")
    assert active is not None and active.value == "Valencia"
    then = timeline.state_at("2024-12-31", "user::location")
    assert then is not None and then.value == "Madrid"
    (change,) = timeline.contradictions("user")
    assert change.old_sources[0] != change.new_source
    assert store.entry(change.old_sources[0]).status == "outdated"


def test_each_explicit_fact_without_a_source_gets_a_small_readable_leaf(
    store: Store, timeline: Timeline
) -> None:
    recorded = timeline.record_fact("project:Falcon", "Stack", "Go", timestamp="2025-01-01")

    leaf = store.read_leaf(recorded.fact.source)
    assert leaf.text == "Fact: project:falcon stack = 'Go' (as of 2025-01-01)"
    assert leaf.project == "falcon"
    assert leaf.extra["facts"] == [
        {
            "subject": "project:falcon",
            "attribute": "stack",
            "value": "Go",
            "timestamp": "2025-01-01T00:00:00Z",
        }
    ]


def test_a_fact_recorded_about_a_leaf_is_kept_in_that_leafs_header(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    leaf = put("Call with the landlord about the flat.", "2025-05-05")

    recorded = timeline.record_fact("user", "location", "Valencia", source=leaf.leaf_id)

    assert recorded.fact.timestamp == "2025-05-05T00:00:00Z"  # the leaf's date by default
    assert recorded.fact.source == leaf.leaf_id
    stored = store.read_leaf(leaf.leaf_id)
    assert stored.extra["facts"][0]["value"] == "Valencia"
    assert stored.text == leaf.text
    assert timeline.facts_of(leaf.leaf_id) == (recorded.fact,)


# ------------------------------------------------------------------ confirmation and order
def test_repeating_a_value_later_is_a_confirmation_not_a_contradiction(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    first = put("I live in Madrid.", "2024-03-11")
    timeline.ingest(first)
    again = put("I still live in Madrid these days.", "2025-06-01")

    (result,) = timeline.ingest(again)

    assert result.outcome is Outcome.CONFIRMED
    assert result.contradictions == ()
    assert timeline.contradictions() == ()
    (period,) = timeline.history("user", "location")
    assert period.is_active and period.value == "Madrid"
    assert period.valid_from == "2024-03-11T00:00:00Z"
    assert period.last_stated == "2025-06-01T00:00:00Z"
    assert period.statements == 2
    assert period.sources == (first.leaf_id, again.leaf_id)
    assert store.entry(first.leaf_id).status == "active"


def test_a_confirmation_differing_only_in_case_and_spacing_is_the_same_value(
    timeline: Timeline,
) -> None:
    timeline.record_fact("host:db01", "os", "Ubuntu 22.04", timestamp="2024-01-01")
    again = timeline.record_fact("host:db01", "os", "  ubuntu   22.04 ", timestamp="2024-06-01")

    assert again.outcome is Outcome.CONFIRMED
    assert timeline.contradictions() == ()


def test_recording_the_same_fact_twice_is_a_duplicate_and_writes_nothing(
    store: Store, timeline: Timeline
) -> None:
    timeline.record_fact("user", "employer", "Acme", timestamp="2024-01-01")
    leaves = store.count("leaf")
    generation = store.generation

    again = timeline.record_fact("user", "employer", "Acme", timestamp="2024-01-01")

    assert again.outcome is Outcome.DUPLICATE
    assert store.count("leaf") == leaves
    assert store.generation == generation
    assert len(timeline.facts("user")) == 1


def test_reingesting_an_unchanged_leaf_changes_nothing(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    leaf = put("I work at Acme.", "2024-01-01")
    timeline.ingest(leaf)
    generation = store.generation

    (again,) = timeline.ingest(leaf.leaf_id)

    assert again.outcome is Outcome.DUPLICATE
    assert store.generation == generation
    assert len(timeline.facts()) == 1


def test_out_of_order_recording_slots_into_the_right_place_in_history(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    madrid = put("I live in Madrid.", "2024-03-11")
    valencia = put("I moved to Valencia.", "2026-02-03")
    timeline.ingest(madrid)
    timeline.ingest(valencia)
    sevilla = put("I moved to Sevilla last month.", "2025-01-15")

    (late,) = timeline.ingest(sevilla)

    assert [s.value for s in timeline.history("user", "location")] == [
        "Madrid",
        "Sevilla",
        "Valencia",
    ]
    assert late.outcome is Outcome.CHANGED
    assert late.notices == (
        "On 2024-03-11 you said user location = 'Madrid', but on 2025-01-15 you updated to "
        "'Sevilla'.",
        "On 2025-01-15 you said user location = 'Sevilla', but on 2026-02-03 you updated to "
        "'Valencia'.",
    )
    madrid_then, sevilla_then, now = timeline.history("user", "location")
    assert madrid_then.valid_to == sevilla_then.valid_from == "2025-01-15T00:00:00Z"
    assert sevilla_then.valid_to == now.valid_from == "2026-02-03T00:00:00Z"
    at = timeline.at("2025-06-30", "user", "location")
    assert at is not None and at.value == "Sevilla"
    # each superseded leaf points at the leaf that directly replaced it
    assert store.entry(madrid.leaf_id).outdated_by == sevilla.leaf_id
    assert store.entry(sevilla.leaf_id).outdated_by == valencia.leaf_id
    assert len(timeline.contradictions()) == 2


def test_a_value_recorded_before_everything_else_becomes_the_first_period(
    timeline: Timeline,
) -> None:
    timeline.record_fact("user", "employer", "Globex", timestamp="2025-01-01")
    early = timeline.record_fact("user", "employer", "Acme", timestamp="2020-01-01")

    assert early.outcome is Outcome.CHANGED
    assert early.notices == (
        "On 2020-01-01 you said user employer = 'Acme', but on 2025-01-01 you updated to 'Globex'.",
    )
    active = timeline.active("user", "employer")
    assert active is not None and active.value == "Globex"


def test_going_back_to_an_earlier_value_is_a_new_period(timeline: Timeline) -> None:
    timeline.record_fact("user", "location", "Madrid", timestamp="2020-01-01")
    timeline.record_fact("user", "location", "Lisbon", timestamp="2022-01-01")
    back = timeline.record_fact("user", "location", "Madrid", timestamp="2024-01-01")

    assert back.outcome is Outcome.CHANGED
    assert [s.value for s in timeline.history("user", "location")] == ["Madrid", "Lisbon", "Madrid"]
    assert [s.status for s in timeline.history("user", "location")] == [
        FactStatus.HISTORICAL,
        FactStatus.HISTORICAL,
        FactStatus.ACTIVE,
    ]
    assert len(timeline.contradictions()) == 2


# ------------------------------------------------------------------ scopes
def test_two_projects_migrating_to_different_stacks_do_not_interfere(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    alpha = put("We migrated the backend from Java to Go.", "2025-03-01", project="alpha")
    beta = put("We migrated the backend to Rust.", "2025-04-01", project="beta")
    timeline.ingest(alpha)
    (beta_result,) = timeline.ingest(beta)

    assert beta_result.outcome is Outcome.NEW
    assert timeline.active("project:alpha", "backend").value == "Go"
    assert timeline.active("project:beta", "backend").value == "Rust"
    assert timeline.contradictions() == ()
    assert store.entry(alpha.leaf_id).status == "active"

    later = put("We migrated the backend to Elixir.", "2025-09-01", project="alpha")
    (change,) = timeline.ingest(later)

    assert change.outcome is Outcome.CHANGED
    assert [c.subject for c in timeline.contradictions()] == ["project:alpha"]
    assert timeline.active("project:beta", "backend").value == "Rust"
    assert store.entry(beta.leaf_id).status == "active"
    assert store.entry(alpha.leaf_id).status == "outdated"


def test_the_user_moving_is_never_about_a_project(timeline: Timeline, put: PutLeaf) -> None:
    timeline.ingest(put("Our stack is Python and PostgreSQL.", "2025-01-01", project="falcon"))
    timeline.ingest(put("I moved to Valencia.", "2025-02-01", project="falcon"))

    assert timeline.subjects() == ("project:falcon", "user")
    assert timeline.active("user", "location").value == "Valencia"
    stack = timeline.active("project:falcon", "stack")
    assert stack is not None and stack.value == "Python and PostgreSQL"


def test_a_preference_stated_in_one_project_never_outdates_anothers(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    toucan = put(
        "In toucan, I prefer 120 characters for line length.", "2025-03-01", project="toucan"
    )
    weka = put("In weka, I prefer 88 characters for line length.", "2025-04-01", project="weka")
    timeline.ingest(toucan)
    (weka_result,) = timeline.ingest(weka)

    assert weka_result.outcome is Outcome.NEW and timeline.contradictions() == ()
    assert store.entry(toucan.leaf_id).status == "active"
    assert timeline.active("project:toucan", "preference:line length").value == "120 characters"

    later = put(
        "In toucan, I prefer 100 characters for line length.", "2025-09-01", project="toucan"
    )
    (change,) = timeline.ingest(later)

    assert change.outcome is Outcome.CHANGED
    assert store.entry(toucan.leaf_id).outdated_by == later.leaf_id
    assert store.entry(weka.leaf_id).status == "active"
    # Said outside any project, a preference is the user's own.
    (mine,) = timeline.ingest(put("I prefer tabs over spaces.", "2025-10-01"))
    assert mine.fact.subject == "user"


def test_staging_moving_to_postgresql_17_outdates_the_old_memory(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    old = put("Staging runs on PostgreSQL 16.", "2025-01-10", project="shop")
    new = put("staging moved to PostgreSQL 17 yesterday.", "2025-11-02", project="shop")
    timeline.ingest(old)

    (result,) = timeline.ingest(new)

    assert result.notices == (
        "On 2025-01-10 you said project:shop staging = 'PostgreSQL 16', but on 2025-11-02 you "
        "updated to 'PostgreSQL 17'.",
    )
    assert store.entry(old.leaf_id).outdated_by == new.leaf_id


def test_two_projects_staging_hosts_stay_apart(timeline: Timeline, put: PutLeaf) -> None:
    timeline.ingest(put("staging listens on port 8080.", "2025-01-01", project="alpha"))
    timeline.ingest(put("staging listens on port 9090.", "2025-02-01", project="beta"))

    assert timeline.active("host:alpha/staging", "port").value == "8080"
    assert timeline.active("host:beta/staging", "port").value == "9090"
    assert timeline.contradictions() == ()


def test_spanish_and_english_statements_share_one_timeline(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    madrid = put("Vivo en Madrid desde 2019.", "2024-03-11")
    valencia = put("Por fin me he mudado a Valencia.", "2026-02-03")
    timeline.ingest(madrid)

    (moved,) = timeline.ingest(valencia)

    assert moved.notices == (SEED_NOTICE,)
    timeline.ingest(put("I work at Acme as a backend developer.", "2024-01-01"))
    (job,) = timeline.ingest(put("Ahora trabajo en Globex.", "2025-01-01"))
    assert job.notices == (
        "On 2024-01-01 you said user employer = 'Acme', but on 2025-01-01 you updated to 'Globex'.",
    )
    assert store.entry(madrid.leaf_id).outdated_by == valencia.leaf_id


def test_clinical_records_for_two_patients_stay_separate(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    ana_1 = put(
        "Paciente: Ana López, 54 años\nDiagnóstico: hipertensión arterial\n"
        "Tratamiento: enalapril 10 mg cada 24 h",
        "2024-02-01",
        domain="medicine.clinical",
    )
    john = put(
        "Patient: John Smith\nDiagnosis: type 2 diabetes\nMedication: metformin 850 mg",
        "2024-03-01",
        domain="medicine.clinical",
    )
    ana_2 = put(
        "Diagnóstico: hipertensión controlada\nTratamiento: enalapril 20 mg cada 24 h",
        "2025-02-01",
        domain="medicine.clinical",
        tags=("patient:Ana López",),
    )
    for leaf in (ana_1, john, ana_2):
        timeline.ingest(leaf)

    assert timeline.subjects() == ("patient:ana lópez", "patient:john smith")
    assert timeline.active("patient:ana lópez", "diagnosis").value == "hipertensión controlada"
    assert timeline.at("2024-12-31", "patient:ana lópez", "treatment").value == (
        "enalapril 10 mg cada 24 h"
    )
    assert timeline.active("patient:john smith", "diagnosis").value == "type 2 diabetes"
    assert timeline.active("patient:john smith", "medication").value == "metformin 850 mg"
    assert {c.subject for c in timeline.contradictions()} == {"patient:ana lópez"}
    assert store.entry(john.leaf_id).status == "active"
    assert store.entry(ana_1.leaf_id).outdated_by == ana_2.leaf_id


def test_code_leaves_are_not_read_for_facts(timeline: Timeline, put: PutLeaf) -> None:
    code = put("# I live in Madrid\nprint('I work at Acme')\n", "2025-01-01", data_type="CODE")

    assert timeline.ingest(code) == ()
    assert timeline.facts() == ()


# ------------------------------------------------------------------ explicit corrections
def test_supersede_flags_the_old_leaf_and_restore_undoes_it(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    old = put("I work at Acme. The staging DB password rotates monthly.", "2024-01-01")
    new = put("Correction: the rotation policy changed, see the runbook.", "2025-01-01")
    timeline.ingest(old)
    timeline.ingest(new)

    correction = timeline.supersede(old.leaf_id, new.leaf_id, "policy changed")

    assert (correction.by, correction.date, correction.reason) == (
        new.leaf_id,
        "2025-01-01T00:00:00Z",
        "policy changed",
    )
    assert store.entry(old.leaf_id).status == "outdated"
    assert [e.id for e in store.corrections_of(new.leaf_id)] == [old.leaf_id]
    # the new memory says nothing about the employer: the old statement stops being current
    assert timeline.active("user", "employer") is None
    (retired,) = timeline.history("user", "employer")
    assert retired.status is FactStatus.HISTORICAL
    assert (retired.valid_to, retired.superseded_by) == ("2025-01-01T00:00:00Z", new.leaf_id)
    assert timeline.at("2024-06-01", "user", "employer").value == "Acme"

    assert timeline.restore(old.leaf_id) == correction

    assert store.entry(old.leaf_id).status == "active"
    assert timeline.active("user", "employer").value == "Acme"
    assert timeline.restore(old.leaf_id) is None


def test_supersede_by_a_leaf_restating_one_value_changes_only_that_value(
    timeline: Timeline, put: PutLeaf
) -> None:
    old = put("I live in Madrid and I work at Acme.", "2024-01-01")
    new = put("I moved to Valencia.", "2025-01-01")
    timeline.ingest(old)
    timeline.ingest(new)

    timeline.supersede(old.leaf_id, new.leaf_id)

    assert timeline.active("user", "location").value == "Valencia"
    assert timeline.active("user", "employer").value == "Acme"


def test_a_later_value_for_one_attribute_keeps_the_others_current(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    both = put("I live in Madrid and I work at Acme.", "2024-01-01")
    timeline.ingest(both)

    timeline.ingest(put("I moved to Valencia.", "2025-01-01"))

    assert store.entry(both.leaf_id).status == "outdated"
    assert timeline.active("user", "employer").value == "Acme"
    assert Timeline(store).rebuild().contradictions == 1


# ------------------------------------------------------------------ queries
def test_dates_before_the_first_fact_have_no_state(timeline: Timeline) -> None:
    timeline.record_fact("user", "location", "Madrid", timestamp="2024-03-11T10:00:00+02:00")

    assert timeline.at("2024-03-10", "user", "location") is None
    assert timeline.at(date(2024, 3, 11), "user", "location").value == "Madrid"
    assert (
        timeline.at(datetime(2024, 3, 11, 7, 59, tzinfo=timezone.utc), "user", "location") is None
    )
    assert timeline.at("2024-03-11T08:00:00Z", "user", "location").value == "Madrid"
    assert timeline.active("user", "employer") is None
    assert timeline.active("person:nobody", "location") is None


def test_history_lists_every_attribute_of_a_subject(timeline: Timeline) -> None:
    timeline.record_fact("person:Luis Marín", "employer", "Acme", timestamp="2024-01-01")
    timeline.record_fact("person:luis marín", "location", "Sevilla", timestamp="2024-02-01")
    timeline.record_fact("person:Luis Marín", "employer", "Globex", timestamp="2025-01-01")

    history = timeline.history("Person:LUIS  MARÍN")

    assert [(s.attribute, s.value) for s in history] == [
        ("employer", "Acme"),
        ("employer", "Globex"),
        ("location", "Sevilla"),
    ]
    assert timeline.subjects() == ("person:luis marín",)
    assert [f.value for f in timeline.facts("person:luis marín", "employer")] == ["Acme", "Globex"]
    stats = timeline.stats()
    assert (stats.facts, stats.keys, stats.subjects, stats.contradictions) == (3, 2, 1, 1)


def test_a_change_whose_attribute_is_only_the_projects_name_outdates_nothing(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    first = put(
        "falcon-infra moved to Nomad 1.7 after the license change.",
        "2024-11-19",
        project="falcon-infra",
    )
    second = put(
        "falcon-infra moved to Spinnaker 1.32 for plan and apply on PRs.",
        "2025-02-01",
        project="falcon-infra",
    )
    timeline.ingest(first)
    (recorded,) = timeline.ingest(second)

    # the change is recorded and relayed, but it is too vague to hide the first memory
    assert recorded.outcome is Outcome.CHANGED and recorded.contradictions
    assert store.entry(first.leaf_id).outdated_by is None
    assert store.entry(first.leaf_id).status == "active"


def test_a_memory_restating_every_version_outdates_the_old_one(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    old = put("Upgraded heron to Django 4.2 LTS and Python 3.11.", "2023-05-22", project="heron")
    partial = put("heron's CI image moved to Python 3.12.", "2024-02-01", project="heron")
    timeline.ingest(old)
    timeline.ingest(partial)
    # only one of its two versions moved: the rest of the old memory still holds
    assert store.entry(old.leaf_id).outdated_by is None
    assert timeline.active("project:heron", "python version").value == "3.12"

    new = put("heron runs Django 5.2 LTS with Python 3.13.", "2025-04-15", project="heron")
    timeline.ingest(new)
    assert store.entry(old.leaf_id).outdated_by == new.leaf_id
    # one version alone says too little to hide a memory (which machine? which image?)
    assert store.entry(partial.leaf_id).outdated_by is None
    # another project's versions are another subject
    other = put("wren runs Django 5.1 with Python 3.12.", "2025-06-01", project="wren")
    timeline.ingest(other)
    assert store.entry(new.leaf_id).outdated_by is None


def test_a_version_being_left_or_the_projects_own_release_outdates_nothing(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    moved = put("Moved heron from Chef 17.4 to Ansible 9.1.", "2024-11-19", project="heron")
    timeline.ingest(moved)
    assert not any(f.attribute == "chef version" for f in timeline.facts("project:heron"))
    bug = put("Heron 1.4.2 miscounted rows; yanked.", "2025-01-10", project="heron")
    release = put("Heron 1.5.0 shipped with the fix.", "2025-02-01", project="heron")
    timeline.ingest(bug)
    timeline.ingest(release)
    assert store.entry(bug.leaf_id).outdated_by is None


def test_one_version_said_of_another_machine_outdates_nothing(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    primary = put(
        "heron's db-primary server runs on the Python 3.13 runtime.", "2024-03-11", project="heron"
    )
    canary = put("The heron canary box runs the app on Python 3.11.", "2025-03-15", project="heron")
    timeline.ingest(primary)
    timeline.ingest(canary)
    assert store.entry(primary.leaf_id).outdated_by is None


def test_a_same_day_correction_never_leaves_two_memories_flagging_each_other(
    store: Store, timeline: Timeline
) -> None:
    """Statements of one moment are ordered by leaf id, so the timeline takes the older
    memory for the newer when its id sorts after the newer's (two saves of one day:
    both leaves are the first block of their text). An explicit correction says which
    is newer: the inferred flag the other way goes, and no later step puts it back."""
    old = make_leaf("The staging database runs on port 5432.", timestamp="2026-01-05T00:00:00Z")
    new = next(
        leaf
        for port in range(6500, 6600)
        if (
            leaf := make_leaf(
                f"The staging database runs on port {port} now.", timestamp=old.timestamp
            )
        ).leaf_id
        < old.leaf_id
    )
    store.put_leaves([old, new])
    timeline.ingest(store.read_leaf(old.leaf_id))
    timeline.ingest(store.read_leaf(new.leaf_id))
    inferred = store.entry(new.leaf_id)
    assert inferred is not None and inferred.outdated_by == old.leaf_id  # the id order's guess
    timeline.supersede(old.leaf_id, new.leaf_id)
    old_entry, new_entry = store.entry(old.leaf_id), store.entry(new.leaf_id)
    assert old_entry is not None and new_entry is not None
    assert (old_entry.outdated_by, new_entry.outdated_by) == (new.leaf_id, None)
    timeline.rebuild()
    again = store.entry(new.leaf_id)
    assert again is not None and again.outdated_by is None


def test_a_changed_decision_outdates_the_earlier_one_in_what_it_changed(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    first = put("ADR for osk: we chose NATS for the event bus, for replay.", "2023-12-03")
    other = put("ADR for wren: we chose Kafka for the event bus, for its tools.", "2024-01-10")
    later = put("Decision updated for osk: the event bus now uses Redis Streams.", "2024-05-22")
    for leaf in (first, other, later):
        timeline.ingest(leaf)
    assert store.entry(first.leaf_id).outdated_by == later.leaf_id
    # another project's decision about a part of the same name is another subject
    assert store.entry(other.leaf_id).outdated_by is None
