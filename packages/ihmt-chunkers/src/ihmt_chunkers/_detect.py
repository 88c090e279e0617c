"""Detection: a document's type, domain and note kinds from its name and its words.

The file extension decides when it names a language. Otherwise lexical signatures in
English and Spanish are scored: code syntax, dated lines, recipe and runbook
vocabulary with numbered steps, dialogue and chapter headings, and the phrasing of
short agent notes (decisions, environment facts, preferences, people, project facts).
Everything here is a pure function of the text; nothing is learned or stored.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from ihmt_chunkers._languages import LANGUAGES, language_for_filename
from ihmt_chunkers._records import Detection, DocType
from ihmt_chunkers._regex import LazyRegex
from ihmt_chunkers._text import _entry_date

__all__ = ["detect_document"]

_SAMPLE_CHARS = 200_000

_OTHER_EXTENSIONS: dict[str, tuple[DocType, str]] = {
    ".json": (DocType.CODE, "software.config"),
    ".yaml": (DocType.CODE, "software.config"),
    ".yml": (DocType.CODE, "software.config"),
    ".toml": (DocType.CODE, "software.config"),
    ".ini": (DocType.CODE, "software.config"),
    ".cfg": (DocType.CODE, "software.config"),
    ".conf": (DocType.CODE, "software.config"),
    ".env": (DocType.CODE, "software.config"),
    ".xml": (DocType.CODE, "software.config"),
    ".html": (DocType.CODE, "software.web"),
    ".htm": (DocType.CODE, "software.web"),
    ".css": (DocType.CODE, "software.web"),
    ".scss": (DocType.CODE, "software.web"),
    ".sql": (DocType.CODE, "software.data"),
    ".sh": (DocType.CODE, "software.shell"),
    ".bash": (DocType.CODE, "software.shell"),
    ".zsh": (DocType.CODE, "software.shell"),
    ".ps1": (DocType.CODE, "software.shell"),
    ".log": (DocType.TEMPORAL, "software.logs"),
}

_SHEBANG = LazyRegex(r"^#!\S*(?:/env\s+)?(?:\S*/)?(python|node|ruby|php|bash|sh|zsh)")
_SHEBANG_LANG = {"python": "python", "node": "javascript", "ruby": "ruby", "php": "php"}

_CODE_LINE = LazyRegex(
    r"""^\s*(?:
        (?:def|class|import|from|return|func|fn|let|const|var|val|public|private|protected|
           static|package|using|namespace|struct|enum|interface|impl|use|module|require|
           include|template|typedef|async|await|export|function|elif|else|end|begin)\b
      | \#include\b | \#define\b | <\?php | @\w+
      | [}\])]+[;,)]*\s*$
      | .*[;{]\s*$
      | .*\)\s*:\s*$
      | .*(?:=>|->|::|:=|\+=|==|!=|&&|\|\|)
    )""",
    re.VERBOSE,
)

_LANG_SIGNS: dict[str, tuple[str, ...]] = {
    "python": (
        r"^\s*def \w+\(.*\)\s*(?:->.*)?:\s*$",
        r"^\s*(?:from [\w.]+ )?import [\w.]+",
        r"^\s*class \w+(?:\(.*\))?:\s*$",
        r"\bself\.",
        r"^\s*(?:elif|except|with) .*:\s*$",
        r"\bprint\(",
    ),
    "java": (
        r"\bpublic (?:static |final |abstract )*(?:class|void|int|String|boolean)\b",
        r"System\.out\.print",
        r"^import java\.",
        r"@Override",
        r"\bprivate (?:static )?final\b",
    ),
    "javascript": (
        r"^\s*function\*? \w+\(",
        r"^\s*(?:const|let|var) \w+ = ",
        r"=>",
        r"console\.log",
        r"\brequire\(",
        r"module\.exports",
    ),
    "typescript": (
        r":\s*(?:string|number|boolean|void|unknown)\b",
        r"^\s*(?:export )?interface \w+",
        r"^\s*(?:export )?type \w+ =",
        r"\bimport type\b",
    ),
    "go": (
        r"^package \w+\s*$",
        r"^func (?:\(\w+ \*?\w+\) )?\w+\(",
        r":= ",
        r"\bfmt\.",
        r"err != nil",
    ),
    "rust": (
        r"\bfn \w+\(",
        r"\blet mut\b",
        r"^\s*impl\b",
        r"\bpub fn\b",
        r"#\[derive",
        r"^use \w+::",
    ),
    "c": (
        r"^#include <\w+\.h>",
        r"\bint main\(",
        r"\bprintf\(",
        r"\bmalloc\(",
        r"^\s*struct \w+ \{",
    ),
    "cpp": (
        r"^#include <(?:iostream|vector|string|memory|map)>",
        r"\bstd::",
        r"^\s*template\s*<",
        r"\bcout\s*<<",
        r"^\s*namespace \w+",
    ),
    "csharp": (
        r"^using System",
        r"Console\.Write",
        r"\{ get; (?:set; )?\}",
        r"^\s*public (?:sealed |static |abstract )*class \w+",
        r"^\s*namespace [\w.]+",
    ),
    "kotlin": (
        r"^\s*fun \w+\(",
        r"^\s*val \w+",
        r"\bdata class\b",
        r"\bprintln\(",
        r"companion object",
    ),
    "swift": (
        r"^\s*func \w+\(",
        r"^import (?:Foundation|UIKit|SwiftUI)",
        r"^\s*guard\b",
        r"^\s*(?:let|var) \w+: \w+",
        r"^\s*struct \w+: ",
    ),
    "php": (r"<\?php", r"\$\w+\s*=", r"\$this->", r"^\s*echo ", r"^namespace \w+\\"),
    "ruby": (
        r"^\s*def \w+[?!]?(?:\(.*\))?\s*$",
        r"^\s*end\s*$",
        r"^require(?:_relative)? '",
        r"^\s*puts ",
        r"\.each do \|",
        r"attr_(?:reader|accessor)",
    ),
}
_LANG_PATTERNS = {
    lang: tuple(LazyRegex(sign, re.MULTILINE) for sign in signs)
    for lang, signs in _LANG_SIGNS.items()
}


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    if decomposed.isascii():
        return decomposed
    # The marks to drop, found among the distinct characters: a character at a time in
    # Python was most of the detection of a long journal.
    marks = {ord(ch) for ch in set(decomposed) if unicodedata.combining(ch)}
    return decomposed.translate(dict.fromkeys(marks)) if marks else decomposed


def _words(spec: str) -> frozenset[str]:
    return frozenset(_fold(spec).split())


_CLINICAL = _words(
    """patient patients diagnosis diagnosed symptoms symptom mg dose dosage prescribed
    blood pressure bp heart rate temperature exam examination physical history allergies
    treatment therapy follow-up followup clinical clinic hospital admission discharge
    labs vitals pain nausea fever cough prescription medication tablet tablets
    paciente pacientes diagnostico sintomas sintoma dosis tension arterial frecuencia
    cardiaca exploracion antecedentes alergias tratamiento terapia seguimiento consulta
    clinica hospital ingreso alta analitica constantes dolor nauseas fiebre tos receta
    medicacion comprimido comprimidos pautado evolucion plan anamnesis"""
)
_COOKING = _words(
    """ingredients ingredient tbsp tsp tablespoon tablespoons teaspoon teaspoons cup cups
    grams oven preheat bake baking stir whisk simmer boil flour sugar salt butter eggs egg
    dough pan skillet minutes serve servings garnish chop minced recipe knead
    ingredientes ingrediente cucharada cucharadas cucharadita cucharaditas taza tazas
    gramos horno precalentar precalienta hornear hornea remover remueve batir bate
    hervir harina azucar sal mantequilla huevos huevo masa sarten minutos servir
    raciones picar picada receta amasar aceite cebolla ajo"""
)
_OPERATIONS = _words(
    """runbook restart rollback deploy deployment kubectl systemctl ssh service incident
    on-call oncall alert alerts escalate escalation verify check logs dashboard failover
    backup restore migration cluster node pod pods outage mitigation procedure
    reiniciar desplegar despliegue incidencia alerta alertas escalar verificar comprobar
    servicio copia restaurar migracion procedimiento guardia caida"""
)
_PROTOCOL = _words(
    """protocol sample samples specimen pipette centrifuge incubate reagent administer
    administration sterile gloves consent aliquot
    protocolo muestra muestras pipeta centrifugar incubar reactivo administrar esteril
    guantes consentimiento alicuota"""
)
_NARRATIVE = _words(
    """said asked replied whispered shouted looked smiled felt thought knew walked turned
    eyes face door night room heart hand hands voice
    dijo pregunto respondio susurro grito miro sonrio sintio penso sabia camino
    ojos cara puerta noche habitacion corazon mano manos voz"""
)
_PRONOUNS = _words("he she his her him they them él ella ellos ellas su sus le")
_LOG_LEVEL = LazyRegex(r"\b(?:INFO|ERROR|WARN(?:ING)?|DEBUG|TRACE|FATAL|CRITICAL)\b")
_CHAT_LINE = LazyRegex(
    r"^\s*\[?[\d/.\-]+[ ,T]+\d{1,2}:\d{2}(?::\d{2})?\]?\s*(?:-\s*)?[\w .'-]{1,40}:\s"
)
_STEP = LazyRegex(
    r"^\s*(?:\d{1,2}[.)]\s|[-*•]\s|(?:step|paso)\s*\d+)", re.IGNORECASE | re.MULTILINE
)
_DIALOGUE = LazyRegex(r"^\s*(?:—|–|«|“|\")", re.MULTILINE)
_HEADING = LazyRegex(r"^\s*(?:#+\s*)?(?:chapter|cap[ií]tulo)\b", re.IGNORECASE | re.MULTILINE)

_DECISION = LazyRegex(
    r"\b(?:we\s+)?(?:decided|decide|chose|choose|picked|opted|settled\s+on|going\s+with|"
    r"will\s+use|we'll\s+use|switch(?:ed)?\s+to|migrat(?:e|ed|ing)\s+to|moved?\s+to|adopt(?:ed)?|"
    r"decision|decidimos|decidi|decidido|decision|elegimos|elegido|optamos|vamos\s+a\s+usar|"
    r"usaremos|migramos|cambiamos\s+a|adoptamos|nos\s+quedamos\s+con)\b"
)
_BECAUSE = LazyRegex(r"\b(?:because|since|due\s+to|porque|ya\s+que|debido\s+a)\b")
_PREFERENCE = LazyRegex(
    r"\b(?:prefer|prefers|preferred|preference|likes?|loves?|dislikes?|hates?|"
    r"always\s+uses?|never\s+uses?|favou?rite|prefiere|prefiero|preferencia|"
    r"le\s+gusta|me\s+gusta|no\s+le\s+gusta|no\s+me\s+gusta|odia|siempre\s+usa|nunca\s+usa|"
    r"favorito|favorita)\b"
)
_PERSON = LazyRegex(
    r"(?:^|[\s,(])(?P<name>[A-ZÁÉÍÓÚÑ][a-záéíóúñ]+(?:\s[A-ZÁÉÍÓÚÑ][a-záéíóúñ]+)?)\s+"
    r"(?:is|was|es|era|works|trabaja|leads|lidera|manages|dirige)\s+"
    r"(?:(?:the|our|my|a|an|el|la|mi|nuestro|nuestra|un|una|as|como|at|en|in)\s+)?"
)
_ROLE = _words(
    """manager lead dba cto ceo cfo engineer developer designer colleague boss wife husband
    sister brother mother father friend partner daughter son client contact owner admin
    architect maintainer reviewer sre analyst doctor nurse teacher
    jefe jefa gerente ingeniero ingeniera desarrollador desarrolladora companero companera
    esposa esposo marido mujer hermana hermano madre padre amigo amiga socio socia hija
    hijo cliente contacto responsable arquitecto arquitecta analista medico medica
    enfermera profesor profesora works trabaja leads lidera manages dirige"""
)
_PROJECT = LazyRegex(
    r"\b(?:project|proyecto|repo|repository|repositorio|deadline|milestone|release|sprint|"
    r"roadmap|client|cliente|stakeholders?|fecha\s+limite|entrega|hito)\b"
)
_PROJECT_NAME = LazyRegex(r"\b(?:project|proyecto)\s+(?P<name>[a-z][\w-]{1,30})\b")
_ENVIRONMENT = LazyRegex(
    r"\b(?:host|hosts|server|servers|servidor|servidores|staging|production|produccion|prod|"
    r"runs?\s+on|corre\s+en|installed|instalad[oa]|version|port|puerto|ubuntu|debian|"
    r"macos|windows|linux|wsl|docker|kubernetes|k8s|nginx|postgres(?:ql)?|mysql|redis|"
    r"python\s?3(?:\.\d+)?|node\s?\d+|java\s?\d+|vm|laptop|workstation|env\s+var|"
    r"environment\s+variable|variable\s+de\s+entorno|ip)\b"
    r"|\b\d{1,3}(?:\.\d{1,3}){3}\b|(?:^|\s)(?:~/|/etc/|/usr/|/home/|/opt/|C:\\)"
)
_PERSONAL_FACT = LazyRegex(
    r"\b(?:i\s+am|i'm|my|mine|i\s+have|i\s+live|user's|the\s+user|el\s+usuario|la\s+usuaria|"
    r"soy|mi|mis|tengo|vivo|birthday|cumpleanos|allergic|alergic[oa]|wife|husband|esposa|"
    r"marido|daughter|son|hija|hijo)\b"
)

_TOPICS: dict[str, frozenset[str]] = {
    "software.infra": _words(
        """deploy deployment deploys server servers host hosts staging production prod
        kubernetes k8s docker container containers terraform pulumi ansible aws gcp azure
        cloud cluster nginx dns ci cd pipeline pipelines backup backups postgres postgresql
        mysql redis database databases vm vps ssh load balancer scheduler cron infra
        infrastructure servidor servidores despliegue contenedor contenedores copia
        base datos red monitoring grafana prometheus"""
    ),
    "software.frontend": _words(
        """react vue angular svelte css html frontend ui ux component components tailwind
        webpack vite browser navegador"""
    ),
    "software.security": _words(
        """auth authentication oauth jwt token tokens tls ssl certificate secrets vault
        password passwords permisos permissions encryption cifrado autenticacion"""
    ),
    "software.testing": _words("pytest unittest tests test testing coverage jest junit pruebas"),
    "finance": _words(
        """invoice invoices budget tax taxes payment payments bank salary expenses accounting
        factura facturas presupuesto impuestos pago pagos banco nomina gastos contabilidad"""
    ),
    "travel": _words(
        """flight flights hotel airport trip itinerary passport vuelo vuelos aeropuerto
        viaje itinerario pasaporte"""
    ),
    "medicine": _words(
        """doctor medication allergy allergic diagnosis hospital medico medicacion alergia
        alergico diagnostico"""
    ),
}
_LANG_WORDS: dict[str, str] = {
    "python": "software.python",
    "django": "software.python",
    "fastapi": "software.python",
    "pip": "software.python",
    "uv": "software.python",
    "java": "software.java",
    "spring": "software.java",
    "maven": "software.java",
    "gradle": "software.java",
    "javascript": "software.javascript",
    "node": "software.javascript",
    "npm": "software.javascript",
    "pnpm": "software.javascript",
    "typescript": "software.typescript",
    "golang": "software.go",
    "rust": "software.rust",
    "cargo": "software.rust",
    "kotlin": "software.kotlin",
    "swift": "software.swift",
    "php": "software.php",
    "laravel": "software.php",
    "ruby": "software.ruby",
    "rails": "software.ruby",
    "csharp": "software.csharp",
    "dotnet": "software.csharp",
}


def detect_document(text: str, *, filename: str | None = None) -> Detection:
    """Detect a document's type, domain and note kinds.

    Args:
        text: The document (only its first 200,000 characters are read).
        filename: Its name or path, if known; an extension that names a programming
            language decides the type on its own.

    Returns:
        The detection; ``confidence`` is 0.95 when the extension decided.
    """
    sample = text[:_SAMPLE_CHARS]
    if filename:
        language = language_for_filename(filename)
        if language is not None:
            return _code(language, 0.95)
        dot = filename.rfind(".")
        known = _OTHER_EXTENSIONS.get(filename[dot:].lower()) if dot > 0 else None
        if known is not None:
            return Detection(doc_type=known[0], domain=known[1], confidence=0.9)
    shebang = _SHEBANG.match(sample)
    if shebang:
        language = _SHEBANG_LANG.get(shebang.group(1))
        if language is not None:
            return _code(language, 0.9)
        return Detection(doc_type=DocType.CODE, domain="software.shell", confidence=0.9)
    return _by_content(sample)


def _code(language: str, confidence: float) -> Detection:
    spec = LANGUAGES[language]
    return Detection(
        doc_type=DocType.CODE,
        domain=spec.domain,
        confidence=confidence,
        language=language,
        tags=(f"lang:{language}",),
    )


def _by_content(text: str) -> Detection:
    lines = [line for line in _outside_fences(text.splitlines()) if line.strip()]
    if not lines:
        return Detection(doc_type=DocType.GENERIC, domain="general", confidence=0.3)
    folded = _fold(text)
    tokens = re.findall(r"[a-z0-9][a-z0-9'-]*", folded)
    counts = Counter(tokens)
    total_words = max(1, len(tokens))

    code = _code_score(lines)
    if code is not None:
        return code

    dated = sum(1 for line in lines if _entry_date(line, True) is not None)
    clinical = (
        _hits(counts, _CLINICAL) + folded.count("blood pressure") + folded.count("tension arterial")
    )
    cooking = _hits(counts, _COOKING)
    operations = _hits(counts, _OPERATIONS)
    protocol = _hits(counts, _PROTOCOL)
    steps = len(_STEP.findall(text))
    narrative = _hits(counts, _NARRATIVE)
    pronouns = _hits(counts, _PRONOUNS)
    dialogue = len(_DIALOGUE.findall(text))
    chapters = len(_HEADING.findall(text))

    clinical_density = clinical / total_words
    if dated >= 2 or (dated >= 1 and clinical_density > 0.04):
        return _temporal(text, lines, dated, clinical_density)
    if clinical_density > 0.06 and clinical >= 4:
        return Detection(doc_type=DocType.TEMPORAL, domain="medicine.clinical", confidence=0.6)

    process = _process(cooking, operations, protocol, steps, total_words)
    if process is not None:
        return process

    narrative_score = (
        narrative / total_words * 20 + dialogue / max(1, len(lines)) * 2 + chapters * 0.5
    )
    if (
        total_words >= 120
        and (narrative_score >= 0.6 or chapters >= 1)
        and (pronouns / total_words > 0.015 or dialogue >= 2 or chapters >= 1)
    ):
        confidence = min(0.95, 0.55 + narrative_score / 4)
        return Detection(
            doc_type=DocType.NARRATIVE, domain="literature.fiction", confidence=confidence
        )
    return _note(text, folded, counts, total_words)


def _outside_fences(lines: Iterable[str]) -> Iterable[str]:
    fence = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if not fence:
            yield line


def _hits(counts: Counter[str], words: frozenset[str]) -> int:
    return sum(counts[word] for word in words if word in counts)


def _code_score(lines: list[str]) -> Detection | None:
    sample = lines[:400]
    code_lines = sum(1 for line in sample if _CODE_LINE.match(line))
    ratio = code_lines / len(sample)
    if code_lines < 2 or ratio < 0.4:
        return None
    joined = "\n".join(sample)
    scores = {
        lang: sum(len(p.findall(joined)) for p in patterns)
        for lang, patterns in _LANG_PATTERNS.items()
    }
    if scores["typescript"] and scores["javascript"]:
        scores["typescript"] += scores["javascript"]
    if scores["cpp"] and scores["c"]:
        scores["cpp"] += scores["c"] // 2
    best = max(scores, key=lambda lang: scores[lang])
    confidence = min(0.9, 0.5 + ratio / 2)
    if scores[best] == 0:
        return Detection(doc_type=DocType.CODE, domain="software", confidence=confidence)
    return _code(best, confidence)


def _temporal(text: str, lines: list[str], dated: int, clinical_density: float) -> Detection:
    chat = sum(1 for line in lines if _CHAT_LINE.match(line))
    logs = sum(1 for line in lines if _LOG_LEVEL.search(line))
    confidence = min(0.95, 0.5 + dated / max(1, len(lines)))
    if logs >= max(2, len(lines) // 3):
        domain = "software.logs"
    elif clinical_density > 0.02:
        domain = "medicine.clinical"
    elif chat >= max(2, len(lines) // 3):
        domain = "communication.chat"
    else:
        domain = "personal.journal"
    return Detection(doc_type=DocType.TEMPORAL, domain=domain, confidence=confidence)


def _process(
    cooking: int, operations: int, protocol: int, steps: int, total_words: int
) -> Detection | None:
    scores = {
        "process.cooking": cooking,
        "process.operations": operations,
        "process.protocol": protocol,
    }
    best = max(scores, key=lambda domain: scores[domain])
    density = scores[best] / total_words
    if scores[best] < 3 or steps < 2 or density < 0.03:
        return None
    confidence = min(0.95, 0.5 + density * 3 + min(steps, 10) / 40)
    return Detection(doc_type=DocType.PROCESS, domain=best, confidence=confidence)


def _note(text: str, folded: str, counts: Counter[str], total_words: int) -> Detection:
    """Short notes and anything else: kinds from phrasing, domain from topic words."""
    kinds: list[str] = []
    if _DECISION.search(folded):
        kinds.append("decision")
    person = _person(text)
    if _PREFERENCE.search(folded):
        kinds.append("preference")
    if person is not None:
        kinds.append("person")
    if _ENVIRONMENT.search(folded):
        kinds.append("environment")
    project_name = _PROJECT_NAME.search(folded)
    if _PROJECT.search(folded):
        kinds.append("project")
    if _PERSONAL_FACT.search(folded) and not kinds:
        kinds.append("personal")
    topic = _topic(counts)
    tags = [f"kind:{kind}" for kind in kinds]
    if project_name:
        tags.append(f"project:{project_name.group('name')}")
    if person is not None:
        tags.append(f"person:{person}")

    primary = _primary_kind(kinds, topic)
    if primary in ("preference", "person", "personal"):
        if primary == "preference" and topic is not None and topic.startswith("software"):
            domain = topic
        else:
            domain = "personal"
        return Detection(doc_type=DocType.PERSONAL, domain=domain, confidence=0.7, tags=tuple(tags))
    if primary == "environment":
        domain = topic if topic is not None and topic.startswith("software") else "software.infra"
    elif primary in ("decision", "project"):
        domain = topic or "project"
    else:
        domain = topic or "general"
    confidence = 0.7 if kinds else (0.5 if topic else 0.3)
    return Detection(
        doc_type=DocType.GENERIC, domain=domain, confidence=confidence, tags=tuple(tags)
    )


def _primary_kind(kinds: list[str], topic: str | None) -> str | None:
    """The kind that decides type and domain: a decision or an environment fact is about
    the work even when it names a person; a preference about a tool is about the tool."""
    for kind in ("decision", "preference", "person", "environment", "project", "personal"):
        if kind in kinds:
            return kind
    return None


def _person(text: str) -> str | None:
    for match in _PERSON.finditer(text):
        name = match.group("name")
        if _fold(name) in _NOT_NAMES:
            continue
        rest = _fold(text[match.end() : match.end() + 60]).split()
        words = [match.group(0).split()[-1].lower(), *rest[:3]]
        if any(_fold(word).strip(".,;:") in _ROLE for word in words):
            return name
    return None


_NOT_NAMES = _words(
    """the this that it there we he she they staging production project proyecto el la
    esto eso este esta ese esa ellos ellas what which who docker python java go rust"""
)


def _topic(counts: Counter[str]) -> str | None:
    language_hits: Counter[str] = Counter()
    for word, domain in _LANG_WORDS.items():
        if counts.get(word):
            language_hits[domain] += counts[word]
    scores = {domain: _hits(counts, words) for domain, words in _TOPICS.items()}
    best = max(scores, key=lambda domain: scores[domain])
    if language_hits:
        lang_domain, lang_score = language_hits.most_common(1)[0]
        if lang_score >= scores[best]:
            return lang_domain
    return best if scores[best] > 0 else None
