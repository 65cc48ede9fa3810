"""Model answers to the graded notebooks' written questions, for learners studying alone.

Each is the instructor's model answer and its grading rubric, as the source notebook of
``exercises/source/<assignment>/`` holds them (tests/course/test_selfcheck.py keeps the two the
same). ``python -m collectives.grading.selfcheck <notebook.ipynb> --model-answers`` prints
them: read them after writing an answer of one's own, not before. By notebook name, then by
the written answer's cell (``grade_id``).
"""

__all__ = ["MODEL_ANSWERS"]

MODEL_ANSWERS = {
    "rings_and_duality": {
        "written_axes": r"""At 64 MB one axis at a time takes about 738 us and both axes at once about 384 us. The time is
almost all transfer: one axis at a time, the second stage moves nearly the whole buffer over
the links of axis 1 while those of axis 0 idle; cutting every shard in two parts that use the
two axes in opposite orders keeps both axes' links busy, so each carries half the bytes and
the bandwidth term halves (The Scaling Book's V / (W x axes)). At 64 kB both take about 30 us,
almost all of it the 15 + 15 hop latencies: both algorithms take the same 30 steps, and halving
a transfer term of under 1 us changes little.

**Rubric (1 point; 0.5 per size):** 0.5 for 64 MB if the answer says that the time is
bandwidth-bound and that the concurrent version uses the links of both axes at once (each
carrying half of the bytes), quoting the printed times; 0.5 for 64 kB if it says that the time
is latency-bound (the hop latencies of the same number of steps) so that halving the bytes per
link barely matters. 0 for a size where the reason is missing or wrong (for example "fewer
steps" at 64 MB).""",
    },
    "rabenseifner_all_reduce": {
        "written_busbw": r"""It is not wrong. busbw is $\frac{S}{t}\cdot\frac{2(n-1)}{n}$ with $n = 32$ GPUs: it measures
what each GPU's busiest link would have to carry for a flat ring, but the hierarchical
all-reduce sends only an eighth of the buffer through each NIC (one per GPU, 8 per node) and
moves the rest over NVLink, nine times faster; the model gives 253.6 GB/s. For 1 GB the
NVLink phases (reduce-scatter and all-gather, $2 \cdot \frac{7}{8} \cdot S / 450$ GB/s) take
about 3.89 ms and the rail all-reduce ($2 \cdot \frac{3}{4} \cdot \frac{S}{8} / 50$ GB/s)
about 3.75 ms: the two are almost equal, so doubling either speed gives only about 1.33x
(1.33x for the NICs, 1.34x for NVLink). Overlapping the phases (pipelining, as the
cluster chapters show) would do more, up to about 1.96x.

**Rubric (1 point; 0.5 + 0.5):** 0.5 if the answer says the number is plausible and explains
it (busbw counts all 32 GPUs' bus bytes; each NIC carries only S/8, the rest goes over
NVLink); 0.5 if it gives the two phase times (about 3.9 ms and 3.75 ms for 1 GB, or the same
split as fractions) and concludes that neither upgrade alone helps much, because the phases
take about the same time (either "about the same gain" or naming overlap/pipelining counts).
0 for a part whose reasoning is missing or contradicts the numbers.""",
    },
    "bruck_all_to_all": {
        "written_choice": r"""With $n = 8$, Bruck takes 3 exchange steps of 4 parts of $S/8$ each (the slots with each bit
set): $3\alpha + 1.5\,S/B$; pairwise exchange 7 steps of one part: $7\alpha + 0.875\,S/B$. At
64 kB Bruck takes about 6.2 us and pairwise about 14.1 us: latency dominates and Bruck's 3
messages beat 7, 2.3x faster. At 16 MB Bruck takes about 59.3 us and pairwise about 45.1 us:
bandwidth dominates and Bruck's relaying sends each part about 1.7 times on average, so
pairwise is 1.3x faster. They meet where $4\alpha = 0.625\,S/B$, at $S = 6.4\,\alpha B
\approx 5.76$ MB.

**Rubric (1 point; 0.5 + 0.5):** 0.5 for the right winner at both sizes with times within
about 10% (Bruck about 6.2 us vs pairwise about 14.1 us at 64 kB; pairwise about 45 us vs
Bruck about 59 us at 16 MB); 0.5 for the reason (latency, counted in messages, vs bytes, Bruck
sending each part over several steps) and a crossover near 5.8 MB. 0 for a part whose reason
is missing or contradicts the numbers.""",
    },
    "ring_all_gather": {
        "written_regimes": r"""At 64 kB the ring takes about 16.3 us of which about 15 us (some 92%) is the 15 hop latencies: the transfer term is only about 1.3 us, so doubling the link speed saves under 1 us, while an algorithm with fewer steps (log2 16 = 4 for recursive doubling) removes most of the latency. At 64 MB the ring takes about 1.35 ms, almost all transfer (latency about 1%): fewer steps gain nothing, faster links (or using both directions) scale the time down.

**Rubric (1 point; 0.5 per size):** for each size, 0.5 if the answer names the dominant term (latency at 64 kB, bandwidth at 64 MB), draws the right consequence (fewer steps vs faster links) and supports it with the printed numbers or the crossover S* = n alpha B = 720 kB; 0 for a size where the regime is wrong or the reason is missing.""",
    },
    "fp8": {
        "written_fp8_ring": r"""The ring's order costs most of the accuracy: in the cell above, 64 ranks added in a chain
give the mean an SNR of about 7.9 dB, a balanced tree about 26.6 dB and cast once, sum in
FP32 about 30.7 dB. In a chain every rank's value is added to the sum of all the ranks before
it, which grows with the number of ranks, and each hop rounds that partial sum to E4M3 (an
error of up to 1/16 of it): late ranks' values are smaller than half a step and are rounded
away, and the errors of 63 roundings of ever larger sums add up. A loss curve that follows
BF16's does not show that one all-reduce is accurate (training tolerates noise, NCCL may pick
its tree). I would sum wide: NCCL's symmetric kernels inside a node (registered buffers, NCCL
2.27 or later), or a reduce-scatter as an all-to-all with FP32 sums (the course's extension of
Megatron Core's BF16 `reduce_scatter_with_fp32_accumulation`), which keeps FP8's one byte per
element on the wire but needs each shard's scale sent beside it; failing that, a tree order
(NCCL's tree), or BF16 on the wire at twice the bytes.

**Rubric (1 point; 0.5 + 0.5):** 0.5 if the answer says the chain (ring) loses SNR, with the
cell's numbers (chain far below the tree and cast once), and why: each hop rounds an ever
larger partial sum, so small contributions are rounded away and the errors add up. 0.5 for a
recommendation with its cost or requirement: summing in FP32 (symmetric kernels for
registered buffers, or an all-to-all reduce-scatter with FP32 sums keeping 1 byte per element
but sending the scales), a tree order, or BF16 at 2 bytes per element. 0 for a part whose
reasoning is missing or contradicts the numbers.""",
    },
    "plan_a_training_run": {
        "written_choice": r"""The search picks `dp=32` with ZeRO 2, `tp=8` with sequence parallelism, no pipeline and 4
micro-batches: 5.14 s per step = 3.77 s of compute + no pipeline bubble + 1.36 s of exposed
communication, using 68.7 GB per GPU (45.6 GB of it activations, 1.0 GB the logits). The
largest exposed item is tensor parallelism: its all-gathers and reduce-scatters (1.34 s in
all, on NVLink) sit on the critical path, since the next matmul needs their result. ZeRO 2
reduce-scatters the 17.6 GB of gradients across the 32 nodes after every micro-batch (0.34 s
each), which hides behind that micro-batch's backward (0.63 s); the weight all-gather after
the update (0.34 s) waits for the first micro-batch's forward (0.31 s) and exposes 0.03 s.
(FSDP over 64 GPUs with `tp=4` and 4 micro-batches is within 0.2 %, at 51.6 GB.)

With no limit, pure data parallelism over all 256 GPUs with one micro-batch is fastest,
3.77 s (27 % faster: every collective hides behind the compute), but it needs 192 GB per GPU
as FSDP and more with ZeRO 1 or 2, more than the H100's 80 GB. With full recomputation the
activations shrink to a block's input, so pure FSDP over all 256 GPUs fits in 19.9 GB and
exposes no communication, but every step pays a second forward pass: 5.03 s, 2 % faster than
the chosen layout, so recomputation buys memory and here a little speed too, by removing the
exposed tensor-parallel traffic.

**Rubric (1 point; 0.5 + 0.5):** 0.5 for part 1 if the step time is split correctly for the
learner's own layout (compute about 3.77 s, bubble and exposed communication from the plan,
memory under 80 GB) and the largest exposed collective is named with the reason (data-parallel
traffic beyond what its micro-batch's compute hides, or tensor-parallel collectives on the
critical path); 0.5 for part 2 if it names the unlimited winner (pure data parallelism or
FSDP over 256 GPUs, one micro-batch, about 3.77 s, 190 GB or more) and why it is excluded, and
says that recomputation trades compute (one more forward, about 5.03 s) for memory with a
consistent number. 0 for a part whose numbers are missing or contradict the plan.""",
    },
}
