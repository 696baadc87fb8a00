"""Differential fuzzer: tvmdevice against tflite-micro on mutated model files.

Not a CI test: a tool for long campaigns (entry point: ``bench/fuzz_differential.py``).

Each case is a model file made from a seed (the shared real models in
``$TVMDEVICE_MODELS_DIR``; models made by ``tvmdevice.aot.builder``, stateful
LSTM and SVDF ones and int16 ones included) by one of three mutation families:

* ``structure`` (:mod:`.mutators` on :mod:`.structure`): the seed read into
  plain objects, 1 to 3 named mutators applied (option fields, option-union
  types that disagree with their table, opcode-index and OperatorCode edges,
  intermediates, cyclic and duplicated outputs, element-count-preserving shape
  permutations up to rank 8, quantization arrays of mismatched lengths and
  extreme values, buffers near 2^40 and 2^62, ``quantizedBiasType`` and
  ``potScaleInt16`` edges, splicing an operator or a subgraph of another
  model), written back;
* ``schema`` (:mod:`.spec_mutation`): fields of a builder ``ModelSpec``;
* ``bytes`` (:mod:`.byte_mutation`): flips, overwrites, inserts and cuts
  weighted toward the flatbuffer's tables.

The case runs in two crash-isolated worker processes (:mod:`.workers`), one
for tvmdevice (every installed target) and one for tflite-micro, each with a
memory limit (``RLIMIT_AS``) and a time limit; a worker that dies or overruns
is recorded and replaced.  The legs (:mod:`.legs`): tvmdevice's Python
executor, tflite-micro, repeated runs of a stateful model (frames 1..n
against TFLM's), and on a sample of the files the ``c`` target runs, the
exported C (``tvmdevice export``, ``tvmdevice run DIR --cpu host``) against
the Python executor.

Rules checked (:mod:`.verdicts`):

* tvmdevice never crashes, hangs or raises anything but a
  ``tvmdevice.errors`` type with a message (class ``crash``, ``hang``,
  ``raw-exception``, ``empty-message``, ``memory-error``);
* when both engines run a file, the outputs are bit-identical on every
  target (``mismatch``), frame after frame for a stateful model
  (``stateful-mismatch``);
* the exported C gives the Python executor's outputs bit for bit
  (``export-mismatch``) and builds and runs whatever the ``c`` target runs
  (``export-error``);
* when TFLM refuses a file (load, allocate or invoke raises) and tvmdevice
  runs it, ``tflm-refuses``; a TFLM crash or hang is recorded as
  ``tflm-crash`` / ``tflm-hang`` (documented TFLM crashes, not disagreements);
* a mismatch on a file whose TFLM result is undefined is ``tflm-undefined``
  (documented, not a disagreement; :func:`.verdicts.tflm_undefined` says why):
  constants stored after the flatbuffer (``Buffer.offset``), which the
  tflite-micro interpreter does not read, a float QUANTIZE whose output
  scale is so small that ``x / scale`` overflows int32, and a tensor of rank 8,
  where TFLM's kernels give wrong values (LiteRT agrees with tvmdevice;
  ``tests/fixtures/fuzz/findings.json``);
* a file using an operator the tflite-micro wheel has no kernel for (it says
  so when it refuses the file: ``load:no-kernel``) is no verdict on the file.

A campaign stopped early (Ctrl-C or SIGTERM) finishes the cases in flight and
writes its summary (``"complete": false``).  Each finding's file is written
to ``--out`` (``<class>/<case>.tflite``, with a ``.json`` note); ``--replay``
runs such files again with the inputs they were found with.
"""
