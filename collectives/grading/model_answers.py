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
        "written_sensitivity": r"""As planned, ZeRO 2 takes 5.14 s (3.77 s compute, 1.34 s exposed TP, 0.03 s exposed DP) and
FSDP 5.14 s (0.57 s exposed TP, 0.80 s exposed FSDP). ZeRO 2's exposed time is almost all
tensor parallelism over 8 GPUs, on the critical path: it does not move with the matmul
efficiency or the routing. FSDP exposes less TP (tp = 4) but 0.80 s of weight gathers and
gradient reduce-scatters across nodes, which hide behind compute when there is more of it:
at matmul efficiency 0.6 (6.29 s compute) FSDP's exposed FSDP time falls to 0 and it wins,
6.86 s vs 7.62 s; at 0.4 too (10.01 vs 10.77 s). Adaptive routing turns its cross-node rings
into bidirectional ones (4.76 ms to 4.34 ms each), halves the exposed FSDP to 0.39 s, and
FSDP wins, 4.74 s vs 5.14 s; enhanced ECMP changes nothing on the SuperPOD's rails. FP8
matmuls halve the windows (2.02 s compute): FSDP's gathers no longer hide (2.55 s exposed)
and it stays at 5.14 s while ZeRO 2 drops to 3.55 s. Measured link rates slow both, FSDP a
little more (5.49 vs 5.43 s).

Before measuring I would launch FSDP: real matmuls run well below peak (Llama 3 reports
38-43 % MFU), and at any efficiency below about 0.998 FSDP is the faster, and it needs 52 GB
instead of 69 GB. The measurement that settles it: the achieved matmul throughput of one
step (a profile of the GEMM kernels, or the end-to-end MFU of a few steps), and, if FP8
is planned, the same with FP8 GEMMs.

**Rubric (1 point; 0.5 + 0.5):** 0.5 for part 1 if it says that lower matmul efficiency (and
adaptive routing) favours FSDP because its exposed collectives are data-parallel ones that
hide behind longer compute (or faster rings), while ZeRO 2's are tensor-parallel ones on the
critical path, and that FP8 favours ZeRO 2 because shorter windows expose FSDP's traffic,
with numbers consistent with the plans; 0.5 for part 2 for a choice justified by the
sensitivity (either layout, if the reason is consistent) and one concrete measurement that
decides it (the matmul efficiency, or the cross-node bandwidth the FSDP rings get). 0 for a
part whose numbers are missing or contradict the plans.""",
    },
    "fabric": {
        "written_choice": r"""Enhanced ECMP needs 4 queue pairs per connection to keep 30 % (0.307) across all 192 racks
(the busiest uplink of the pod is what the step waits for; one rack's statistic would have
asked for fewer), and it still wastes about 70 % of the uplinks' speed; a failed cable barely
changes it, because hashing is indifferent to failures. The controller reaches link speed (17
uplinks still fit 16 flows when it recomputes) but its static assignment doubles the step
after a cable fails, until it recomputes. Adaptive routing reaches link speed with no
per-job knowledge and re-spreads around a failure by itself (as Task 5's fabric does), so I
would pick it where the switches and NICs support it (out-of-order delivery), and enhanced
ECMP with more queue pairs only where they do not.

**Rubric (1 point; 0.5 + 0.5):** 0.5 for quoting the number of queue pairs for 30 % and
saying that the step waits for the busiest uplink of all the racks (not one rack's); 0.5 for
a choice supported by what a failure does to it (static engineered: the step doubles until
recomputed; hashing: about unchanged; adaptive: spreads around it). 0 for a part without
numbers or with the failure behaviour wrong.""",
    },
}
