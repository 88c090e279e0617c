"""Detection accuracy over labelled English and Spanish samples (printed; must be ≥ 90 %)."""

from __future__ import annotations

import pytest

from ihmt_chunkers import DocType, detect

C, N, T, P, H, G = (
    DocType.CODE,
    DocType.NARRATIVE,
    DocType.TEMPORAL,
    DocType.PROCESS,
    DocType.PERSONAL,
    DocType.GENERIC,
)

NOVEL_EN = """Chapter 3

The rain had not stopped for three days when Martha finally opened the door. She looked
at the stranger on the porch and felt her heart sink, because she knew his face from the
photographs her father had burned.

"You shouldn't have come," she said.

He smiled, the same crooked smile, and took off his hat. "I had nowhere else to go," he
replied. The wind pushed at the door and she held it with both hands, thinking of the
night her father left, of the lamp still burning in the kitchen window.

She stepped aside. He walked past her into the room and stood by the fire, dripping on
the old rug, and for a long time neither of them spoke. Outside, the dogs were barking at
something only they could see, and Martha wondered whether she would ever sleep again.
"""

NOVEL_ES = """Capítulo 7

Cuando Elena llegó al puerto ya era de noche. Miró las barcas que volvían y sintió que el
corazón le latía con fuerza, porque sabía que su hermano no estaría entre ellos.

—¿Lo has visto? —preguntó a un viejo pescador.

El hombre negó con la cabeza y siguió recogiendo la red con sus manos agrietadas. Ella
caminó por el muelle, despacio, pensando en la última vez que lo vio, en la puerta de la
casa, con la chaqueta azul y aquella sonrisa que nunca le llegaba a los ojos.

—Volverá —dijo una voz a su espalda.

Se giró. Era su madre, envuelta en el chal negro, con la cara cansada de tantas noches sin
dormir. Elena no respondió; le tomó la mano y juntas miraron el mar hasta que la última
luz se apagó sobre el agua.
"""

SAMPLES: list[tuple[str, str | None, DocType, str]] = [
    # --- code by extension
    ("def f():\n    return 1\n", "util.py", C, "software.python"),
    ("package main\n\nfunc main() {}\n", "main.go", C, "software.go"),
    ("fn main() {}\n", "main.rs", C, "software.rust"),
    ("<?php echo 1;\n", "index.php", C, "software.php"),
    ("class A {}\n", "A.kt", C, "software.kotlin"),
    # --- code by content
    (
        "import os\nimport sys\n\n\ndef main(argv):\n    for arg in argv:\n"
        "        print(arg)\n    return 0\n\n\nclass Runner:\n    def run(self):\n"
        "        return main(sys.argv)\n",
        None,
        C,
        "software.python",
    ),
    (
        "package com.acme;\n\nimport java.util.List;\n\npublic class Greeter {\n"
        "    private final String name;\n\n    @Override\n    public String toString() {\n"
        "        return name;\n    }\n\n    public static void main(String[] args) {\n"
        '        System.out.println("hi");\n    }\n}\n',
        None,
        C,
        "software.java",
    ),
    (
        'package store\n\nimport (\n\t"fmt"\n)\n\nfunc Load(path string) error {\n'
        '\tdata, err := read(path)\n\tif err != nil {\n\t\treturn fmt.Errorf("load: %w", err)\n'
        "\t}\n\treturn parse(data)\n}\n",
        None,
        C,
        "software.go",
    ),
    (
        "use std::collections::HashMap;\n\n#[derive(Debug)]\npub struct Cache {\n"
        "    map: HashMap<String, u32>,\n}\n\nimpl Cache {\n    pub fn new() -> Self {\n"
        '        let mut map = HashMap::new();\n        map.insert("a".into(), 1);\n'
        "        Cache { map }\n    }\n}\n",
        None,
        C,
        "software.rust",
    ),
    (
        "const express = require('express');\nconst app = express();\n\n"
        "app.get('/', (req, res) => {\n  console.log('hit');\n  res.send('ok');\n});\n\n"
        "module.exports = app;\n",
        None,
        C,
        "software.javascript",
    ),
    # --- journals, chats, logs, clinical records
    (
        "2024-01-02: Long walk by the river, finally finished the book.\n"
        "2024-01-03: Rainy. Called mum, she sounds better.\n"
        "2024-01-05: First day back at work after the holidays.\n",
        None,
        T,
        "personal.journal",
    ),
    (
        "Lunes, 4 de marzo de 2024\nHoy he empezado a correr otra vez. Me duelen las piernas.\n\n"
        "Martes, 5 de marzo de 2024\nCena con Laura y Pedro. Hablamos del viaje a Lisboa.\n\n"
        "Jueves, 7 de marzo de 2024\nNo he dormido bien. Mañana toca dentista.\n",
        None,
        T,
        "personal.journal",
    ),
    (
        "March 3, 2024\nMoved into the new flat today. Boxes everywhere.\n\n"
        "March 4, 2024\nBought a desk and a lamp. The neighbours seem nice.\n",
        None,
        T,
        "personal.journal",
    ),
    (
        "[2024-03-03 10:00] Ana: are we still on for the deploy?\n"
        "[2024-03-03 10:01] Luis: yes, after the standup\n"
        "[2024-03-03 10:05] Ana: ok, I'll prepare the release notes\n"
        "[2024-03-04 09:12] Luis: morning! it went fine\n",
        None,
        T,
        "communication.chat",
    ),
    (
        "03/03/2024, 10:00 - Marta: ¿Quedamos mañana?\n"
        "03/03/2024, 10:02 - Pablo: Sí, a las cinco en el parque\n"
        "04/03/2024, 18:30 - Marta: Llego tarde, perdona\n",
        None,
        T,
        "communication.chat",
    ),
    (
        "2024-05-01 10:00:01 INFO server started on :8080\n"
        "2024-05-01 10:00:05 WARN slow query took 2300ms\n"
        "2024-05-01 10:01:00 ERROR connection refused to db-1\n"
        "2024-05-01 10:01:02 INFO retrying\n",
        None,
        T,
        "software.logs",
    ),
    (
        "Visit 2024-02-10\nPatient reports chest pain for two days. Blood pressure 150/95, heart "
        "rate 88. No fever. Diagnosis: hypertension. Treatment: amlodipine 5 mg daily.\n\n"
        "Visit 2024-03-12\nFollow-up. Blood pressure 135/85. Symptoms improved; continue "
        "treatment. Labs ordered.\n",
        None,
        T,
        "medicine.clinical",
    ),
    (
        "Consulta 12/01/2024\nPaciente de 54 años con tos y fiebre de tres días. Tensión arterial "
        "130/80. Diagnóstico: bronquitis aguda. Tratamiento: paracetamol 1 g cada 8 horas.\n\n"
        "Consulta 19/01/2024\nEvolución favorable, sin fiebre. Se retira tratamiento. Seguimiento "
        "en un mes.\n",
        None,
        T,
        "medicine.clinical",
    ),
    (
        "Paciente varón de 67 años. Antecedentes: diabetes tipo 2, hipertensión. Exploración: "
        "dolor abdominal difuso, náuseas. Analítica pendiente. Plan: dieta absoluta, "
        "sueroterapia y control de constantes. Medicación: metformina suspendida.\n",
        None,
        T,
        "medicine.clinical",
    ),
    # --- recipes, runbooks, protocols
    (
        "# Pancakes\n\nIngredients:\n- 2 eggs\n- 200 g flour\n- 300 ml milk\n- 1 tbsp sugar\n"
        "- a pinch of salt\n\nSteps:\n1. Whisk the eggs with the milk and sugar.\n"
        "2. Add the flour and salt and stir until smooth.\n3. Heat a pan with butter.\n"
        "4. Cook each pancake 2 minutes per side and serve.\n",
        None,
        P,
        "process.cooking",
    ),
    (
        "Tortilla de patatas\n\nIngredientes:\n- 4 huevos\n- 3 patatas\n- 1 cebolla\n"
        "- aceite de oliva\n- sal\n\nPreparación:\n1. Pela y corta las patatas y la cebolla.\n"
        "2. Fríe a fuego lento en abundante aceite durante 20 minutos.\n"
        "3. Bate los huevos con sal y mezcla con las patatas.\n"
        "4. Cuaja la tortilla en la sartén por ambos lados y sirve.\n",
        None,
        P,
        "process.cooking",
    ),
    (
        "Runbook: API latency alert\n\n1. Check the dashboard for the affected service.\n"
        "2. ssh into the node and run `systemctl status api`.\n"
        "3. If the pod is crash-looping, restart it with kubectl rollout restart.\n"
        "4. If errors persist, rollback the last deploy.\n"
        "5. Escalate to the on-call lead and open an incident.\n",
        None,
        P,
        "process.operations",
    ),
    (
        "Procedimiento de recuperación de la base de datos\n\n"
        "1. Comprobar las alertas en el panel de guardia.\n"
        "2. Detener el servicio de escritura y verificar la última copia de seguridad.\n"
        "3. Restaurar la copia en el nodo secundario.\n"
        "4. Verificar la integridad y reiniciar el servicio.\n"
        "5. Escalar la incidencia si la restauración falla.\n",
        None,
        P,
        "process.operations",
    ),
    (
        "Sample preparation protocol\n\n1. Put on sterile gloves.\n"
        "2. Pipette 200 µl of each sample into a labelled tube.\n"
        "3. Centrifuge the samples at 3000 rpm for 10 minutes.\n"
        "4. Aliquot the supernatant and add the reagent.\n5. Incubate at 37 °C for one hour.\n",
        None,
        P,
        "process.protocol",
    ),
    (
        "Protocolo de extracción\n\n1. Colocarse guantes estériles.\n"
        "2. Rotular cada muestra y registrar el consentimiento.\n"
        "3. Centrifugar las muestras durante 10 minutos.\n"
        "4. Pipetear el sobrenadante y añadir el reactivo.\n5. Incubar una hora.\n",
        None,
        P,
        "process.protocol",
    ),
    # --- narrative
    (NOVEL_EN, None, N, "literature.fiction"),
    (NOVEL_ES, None, N, "literature.fiction"),
    (NOVEL_EN.replace("Chapter 3\n\n", ""), "story.txt", N, "literature.fiction"),
    # --- agent notes: decisions
    (
        "We decided to use Pulumi for the falcon scheduler because Terraform state kept "
        "drifting between environments.",
        None,
        G,
        "software.infra",
    ),
    (
        "Decidimos migrar la base de datos de staging a PostgreSQL 17 porque la 15 deja de "
        "tener soporte.",
        None,
        G,
        "software.infra",
    ),
    (
        "Decision: the payments service will use Python with FastAPI instead of Django.",
        None,
        G,
        "software.python",
    ),
    (
        "We chose pnpm over npm for the monorepo; installs were three times faster.",
        None,
        G,
        "software.javascript",
    ),
    # --- agent notes: environment facts
    ("The staging host runs PostgreSQL 16 on Debian 12 at 10.0.0.12.", None, G, "software.infra"),
    (
        "El servidor de producción corre en Ubuntu 22.04 con nginx delante, puerto 8443.",
        None,
        G,
        "software.infra",
    ),
    (
        "Dev laptop: macOS 14, Python 3.12 installed with uv, Docker Desktop for the db.",
        None,
        G,
        "software.python",
    ),
    # --- agent notes: preferences
    (
        "The user prefers tabs over spaces in Python and wants type hints everywhere.",
        None,
        H,
        "software.python",
    ),
    ("Prefiero que las respuestas sean cortas y en español.", None, H, "personal"),
    ("User likes dark roast coffee and hates meetings before 10am.", None, H, "personal"),
    # --- agent notes: people
    (
        "Luis is the DBA for project falcon; ask him before touching the schema.",
        None,
        H,
        "personal",
    ),
    ("Marta es la jefa de producto del equipo de pagos.", None, H, "personal"),
    (
        "Ana works as a frontend engineer at Acme and reviews all React changes.",
        None,
        H,
        "personal",
    ),
    # --- agent notes: project facts
    ("Project falcon's deadline is June 30 and the client demo is on June 15.", None, G, "project"),
    (
        "El proyecto orion tiene la entrega el 15 de julio y el cliente es Banco Sur.",
        None,
        G,
        "project",
    ),
    # --- personal facts
    ("My birthday is on 12 May and I'm allergic to penicillin.", None, H, "personal"),
    ("Vivo en Valencia con mi pareja y dos gatos.", None, H, "personal"),
    # --- generic
    (
        "Quarterly budget review: travel expenses rose 12%, the tax provision is unchanged, "
        "and two invoices are still unpaid.",
        None,
        G,
        "finance",
    ),
]


def test_there_are_at_least_40_labelled_samples_in_english_and_spanish() -> None:
    assert len(SAMPLES) >= 40


def test_detection_accuracy_is_at_least_90_percent() -> None:
    misses: list[str] = []
    for text, filename, doc_type, domain in SAMPLES:
        found = detect(text, filename=filename)
        if (found.doc_type, found.domain) != (doc_type, domain):
            misses.append(
                f"  expected {doc_type.value}/{domain}, got "
                f"{found.doc_type.value}/{found.domain}: {text[:60]!r}"
            )
    accuracy = 1 - len(misses) / len(SAMPLES)
    print(f"\ndetection accuracy: {accuracy:.1%} ({len(SAMPLES) - len(misses)}/{len(SAMPLES)})")
    for miss in misses:
        print(miss)
    assert accuracy >= 0.90


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We decided to use Pulumi for the falcon scheduler because of drift.", "kind:decision"),
        ("The staging host runs PostgreSQL 16 on Debian 12.", "kind:environment"),
        ("The user prefers pytest over unittest.", "kind:preference"),
        ("Luis is the DBA for project falcon.", "kind:person"),
        ("Project falcon's deadline is June 30.", "kind:project"),
        ("Decidimos usar Go para el nuevo servicio.", "kind:decision"),
        ("Marta es la jefa de producto.", "kind:person"),
    ],
)
def test_short_agent_notes_are_tagged_with_their_kind(text: str, kind: str) -> None:
    assert kind in detect(text).tags


def test_named_projects_and_people_become_tags() -> None:
    tags = detect("Luis is the DBA for project falcon.").tags
    assert "project:falcon" in tags
    assert "person:Luis" in tags


def test_an_extension_that_names_a_language_decides_with_high_confidence() -> None:
    found = detect("anything at all", filename="src/app/Main.java")
    assert found.doc_type is DocType.CODE
    assert found.language == "java"
    assert found.confidence >= 0.95
    assert detect("x", filename="view.tsx").language == "tsx"


def test_empty_text_is_generic() -> None:
    found = detect("")
    assert found.doc_type is DocType.GENERIC
    assert found.domain == "general"
