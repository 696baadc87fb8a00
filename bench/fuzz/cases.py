"""Where a campaign's cases come from: generated (deterministic per seed and case) or replayed."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from .byte_mutation import mutate_bytes, table_ranges
from .mutators import MUTATORS, Mutator
from .seeds import builder_specs, shared_models, stateful_and_int16_models
from .spec_mutation import mutate_spec
from .structure import Model, read, write

#: Mutation families and their share of generated cases.
FAMILIES = {"structure": 0.45, "schema": 0.25, "bytes": 0.30}


class CaseSource:
    """Deterministic case ``i`` of a campaign with seed ``seed``.

    A case is one of three families: ``structure`` (1 to 3 mutators of :data:`mutators.MUTATORS`
    applied to a seed read with :mod:`structure`: the shared real models, the builder's models,
    and stateful and int16 builder models; splicing takes its donor among them), ``schema``
    (fields of a builder ``ModelSpec``) or ``bytes`` (byte edits weighted toward the tables).
    """

    def __init__(self, seed: int, export_every: int = 50) -> None:
        self.seed = seed
        self.export_every = export_every
        self.specs = builder_specs()
        from tvmdevice.aot.builder._flatbuffer import serialize

        self.shared = shared_models()
        self.special = stateful_and_int16_models()
        self.files = self.shared + [(name, serialize(spec)) for name, spec in self.specs] + self.special
        self.ranges = {name: table_ranges(data) for name, data in self.files}
        self._models: dict[str, Model] = {}

    def model(self, name: str) -> Model:
        """Seed ``name`` read as a structure (read once; callers copy before changing it)."""
        if name not in self._models:
            self._models[name] = read(dict(self.files)[name])
        return self._models[name]

    def input_seed(self, i: int) -> int:
        """The seed of case ``i``'s random inputs: its number."""
        return i

    def exported(self, i: int) -> bool:
        """Whether case ``i`` also runs the export leg (1 in ``export_every``, 0: never)."""
        return self.export_every > 0 and random.Random(f"{self.seed}:{i}:export").randrange(self.export_every) == 0

    def case(self, i: int) -> tuple[bytes, str]:
        rng = random.Random(f"{self.seed}:{i}")
        r = rng.random()
        if r < FAMILIES["structure"]:
            return self.structure_case(rng)
        if r < FAMILIES["structure"] + FAMILIES["schema"] and self.specs:
            name, spec = rng.choice(self.specs)
            try:
                data, how = mutate_spec(spec, rng)
            except Exception as e:  # noqa: BLE001 - the builder refused the mutated spec
                data, how = serialize_fallback(spec), f"schema-unserializable({type(e).__name__})"
        else:
            # Half the byte-level cases start from a real model (there are few).
            name, data = rng.choice(self.shared if self.shared and rng.random() < 0.5 else self.files)
            data, how = mutate_bytes(data, rng, self.ranges[name])
            if rng.random() < 0.1:
                data, how2 = mutate_bytes(data, rng, [])
                how += ";" + how2
        return data, f"{name} {how}"

    def structure_case(self, rng: random.Random, only: Mutator | None = None) -> tuple[bytes, str]:
        """A seed read structurally, 1 to 3 applicable mutators applied (or ``only``), written back."""
        # The real models are few among the seeds: 40% of these cases start from one, 20% from a
        # stateful or int16 builder model, the rest from any seed.
        r = rng.random()
        pool = self.shared if r < 0.4 and self.shared else self.special if r < 0.6 else self.files
        name = rng.choice([n for n, _ in pool])
        model = self.model(name).copy()
        steps = []
        for _ in range(1 if only else rng.choice([1, 1, 1, 2, 3])):
            usable = [only] if only else [m for m in MUTATORS if m.applicable(model)]
            if not usable or not usable[0].applicable(model):
                break
            mutator = rng.choice(usable)
            # A splice's donor: another seed, or 30% of the time this one (its operators fit its tensors).
            donor = self.model(name if rng.random() < 0.3 else rng.choice([n for n, _ in self.files]))
            change = mutator.apply(model, rng, donor)
            steps.append(f"{mutator.name}({change.note})")
        try:
            data = write(model)
        except Exception as e:  # noqa: BLE001 - a value the schema's field cannot hold
            return dict(self.files)[name], f"{name} structure-unwritable({type(e).__name__}: {e})"
        return data, f"{name} structure:" + ",".join(steps)


class ReplaySource:
    """Case files given on the command line (``--replay``), in order."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths

    def case(self, i: int) -> tuple[bytes, str]:
        return self.paths[i].read_bytes(), f"replay {self.paths[i]}"

    def input_seed(self, i: int) -> int:
        """The inputs' seed: the campaign's case number from the finding's ``.json`` note, so that
        a replay feeds the inputs the finding was made with (else ``i``)."""
        note = self.paths[i].with_suffix(".json")
        try:
            return int(json.loads(note.read_text())["case"])
        except (OSError, ValueError, KeyError, TypeError):
            return i


def serialize_fallback(spec: Any) -> bytes:
    from tvmdevice.aot.builder._flatbuffer import serialize

    return serialize(spec)
