"""The seeded author's papers as arXiv would serve them, per DESIGN.md's public facts.

Titles and abstracts come from the project's own seed files, so the fake
upstream agrees with the snapshot exactly where the real one would.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from syncd.domain.record import Record

SEEDS = Path(__file__).resolve().parent.parent / "seeds"
AUTHOR = "Zhida Jiang"
# The arXiv ids of the seeded author's papers, as upstream_versions() serves them.
FEDCG = "2212.09483"
OXYGEN = "2512.22386"
NESTPIPE = "2604.06956"
FLOWTRAIN = "2606.23087"
FLEXMARL = "2602.09578"
LORA = "2606.12883"
CALIBRATION = "2606.03328"
# The calibration paper's key: the seeds list it before arXiv has it, so it keeps its slug.
CALIBRATION_KEY = "rethinking-calibration-for-high-sparsity-llm"
_PAGE = (SEEDS / "000_bae548b29664adf4.txt").read_text(encoding="utf-8").split("\n\n")
_LIST = (SEEDS / "001_486f742ac3512806.txt").read_text(encoding="utf-8").split("\n\n")


def seed_abstract(title_start: str) -> str:
    """The abstract that follows the seed page's title starting with ``title_start``."""
    index = next(i for i, p in enumerate(_PAGE) if p.startswith(title_start))
    return _PAGE[index + 1]


def seed_title(title_start: str) -> str:
    return next(p for p in _PAGE if p.startswith(title_start))


def list_abstract(authors_line: str) -> str:
    """The abstract that follows an authors line of the author-list page."""
    index = next(i for i, p in enumerate(_LIST) if p.startswith(authors_line))
    return _LIST[index + 1]


# The co-authors the public records do not name, the same ones on every paper,
# with the accents arXivRaw and the author feeds carry in TeX (tests.recorded).
_COAUTHORS = (
    "Zoë Ørsted", "José Núñez", "Łukasz Wróbel", "Jörg Weiß", "Çağla Öztürk",
    "François Lefèvre", "Søren Åberg", "Tomáš Dvořák", "Anaïs Grégoire", "Mária Kovács",
    "Zeynep Şahin", "Björn Müller", "Inês Conceição", "Renée Brontë", "Miloš Šimić",
    "Eliška Nováková", "Ólafur Þórsson", "Kristīne Bērziņa", "Dorothée Mœller", "Jiří Hájek",
    "Ángel Peña", "Noémie Duprée", "Håkon Løvås", "Ludmila Černá", "Göran Ekström",
    "Chloé Bézier", "Mateusz Żółć", "Aurélie Côté", "Oddný Jónsdóttir", "Iñaki Goñi",
    "Matthäus Kröger", "Agnès Varèse",
)  # fmt: skip


def _people(first: list[str], total: int, me_at: int | None = None) -> tuple[str, ...]:
    names = list(first)
    filler = 0
    while len(names) < total:
        names.append(_COAUTHORS[filler])
        filler += 1
    if me_at is not None and AUTHOR not in names:
        names.insert(me_at - 1, AUTHOR)
        names.pop()
    return tuple(names)


def _record(
    arxiv_id: str,
    title: str,
    abstract: str,
    authors: tuple[str, ...],
    *,
    categories: tuple[str, ...],
    published: str,
) -> Record:
    return Record(
        arxiv_id=arxiv_id,
        version=1,
        title=title,
        abstract=abstract,
        authors=authors,
        authors_complete=True,
        primary_category=categories[0],
        categories=categories,
        published=published,
        updated=published,
    )


CALIBRATION_V1_TITLE = (
    "Calibration Data Trade-offs Across Capability Dimensions: Why Multi-Source Mixing "
    "Matters for High-Sparsity LLM Pruning"
)
FLEXMARL_V1_TITLE = (
    "Rollout-Training Co-Design for Efficient LLM-Based Multi-Agent Reinforcement Learning"
)


def upstream_versions() -> list[Record]:
    """Every version of the seeded author's arXiv papers, oldest first per paper."""
    fedcg = _record(
        FEDCG,
        seed_title("Adaptive Control"),
        seed_abstract("Adaptive Control"),
        ("Zhida Jiang", "Yang Xu", "Hongli Xu", "Zhiyuan Wang", "Chen Qian"),
        categories=("cs.DC", "cs.LG"),
        published="2022-12-19T10:00:00Z",
    )
    oxygen = _record(
        OXYGEN,
        seed_title("OxygenREC"),
        seed_abstract("OxygenREC"),
        _people(["Xuegang Tang", "Jie Wu"], 33, me_at=12),
        categories=("cs.IR",),
        published="2025-12-27T08:00:00Z",
    )
    nestpipe = _record(
        NESTPIPE,
        seed_title("NestPipe"),
        seed_abstract("NestPipe"),
        _people(["Zhida Jiang", "Zhaolong Xing", "Huichao Chai"], 15),
        categories=("cs.DC", "cs.LG"),
        published="2026-04-08T09:00:00Z",
    )
    flowtrain = _record(
        FLOWTRAIN,
        seed_title("FlowTrain"),
        seed_abstract("FlowTrain"),
        _people(["Zhida Jiang", "Zhaolong Xing", "Yang Pei"], 17),
        categories=("cs.LG", "cs.DC"),
        published="2026-06-26T09:00:00Z",
    )
    flexmarl_v1 = _record(
        FLEXMARL,
        FLEXMARL_V1_TITLE,
        seed_abstract("FlexMARL"),
        _people(["Zhaolong Xing", "Zhida Jiang"], 9),
        categories=("cs.LG", "cs.MA"),
        published="2026-02-10T09:00:00Z",
    )
    lora = _record(
        LORA,
        seed_title("The Hidden Power"),
        seed_abstract("The Hidden Power"),
        _people(["Zicheng Zhang", "Haoran Li", "Jiaxing Wang"], 13, me_at=10),
        categories=("cs.AI", "cs.LG"),
        published="2026-06-14T09:00:00Z",
    )
    calibration_v1 = _record(
        CALIBRATION,
        CALIBRATION_V1_TITLE,
        list_abstract("Hu Xu, Zhaolong Xing"),
        _people(["Hu Xu", "Zhaolong Xing", "Congcong Liu"], 8, me_at=6),
        categories=("cs.LG", "cs.CL"),
        published="2026-06-03T09:00:00Z",
    )
    return [
        fedcg,
        oxygen,
        replace(
            oxygen,
            version=2,
            # TeX as the API writes it: Greek converted, the rest of the math as typed.
            comment="v2: extended experiments, $\N{GREEK SMALL LETTER ALPHA}$-scaled baselines"
            " in $\\mathcal{O}(n)$",
            updated="2026-01-15T08:00:00Z",
        ),
        nestpipe,
        flowtrain,
        flexmarl_v1,
        replace(
            flexmarl_v1, version=2, title=seed_title("FlexMARL"), updated="2026-03-01T09:00:00Z"
        ),
        lora,
        calibration_v1,
    ]
