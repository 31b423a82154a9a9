#!/usr/bin/env python3
"""Build the specviz tutorial notebooks (notebooks/01_*.ipynb ... ) from the Python source below.

The prose lives here so it is easy to edit and review; the generated notebooks are
committed without outputs or execution counts.

    python scripts/build_notebooks.py            # (re)write notebooks/NN_*.ipynb
    python scripts/build_notebooks.py --check    # exit 1 if a committed notebook differs

Conventions in every notebook: p = target, q = draft; every number shown in a table is
computed by specviz, never typed in; plotting and sampling live in specviz, not here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from textwrap import dedent

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}

SETUP = """\
import numpy as np
from fractions import Fraction

import specviz as sv

p, q, vocab = sv.TUTORIAL_P, sv.TUTORIAL_Q, sv.TUTORIAL_VOCAB   # p = target, q = draft
print("vocab :", vocab)
print("p     :", p, "  (target)")
print("q     :", q, "  (draft)")"""

EXACT = """\
# The same pair as exact fractions: 3/5, 3/10, 1/10 and 2/5, 1/2, 1/10.
P = [Fraction(str(v)) for v in p]
Q = [Fraction(str(v)) for v in q]
show = lambda arr: "(" + ", ".join(str(v) for v in arr) + ")"   # Fractions as 3/5, not Fraction(3, 5)"""


def md(text: str):
    return ("markdown", dedent(text).strip("\n"))


def code(text: str):
    return ("code", dedent(text).strip("\n"))


def check_yourself(question: str, answer: str):
    """A question with the answer folded away in an HTML <details> block."""
    return md(
        "## Check yourself\n\n"
        + dedent(question).strip("\n")
        + "\n\n<details>\n<summary><b>Show the answer</b></summary>\n\n"
        + dedent(answer).strip("\n")
        + "\n\n</details>"
    )


# --------------------------------------------------------------------------- 01

NB01 = [
    md("""
    # 1 · Why speculative decoding must be lossless, and the notation we use

    *specviz tutorial, part 1 of 10.* Sources: Leviathan, Kalman & Matias 2023
    ([arXiv:2211.17192](https://arxiv.org/abs/2211.17192)) and Chen et al. 2023
    ([arXiv:2302.01318](https://arxiv.org/abs/2302.01318)).

    **What you will learn**

    - what "lossless" means for speculative decoding, stated precisely;
    - why inference serving and RL post-training both *depend* on it;
    - the handful of symbols every later notebook uses ($p$, $q$, $a(x)$, $(p-q)^+$, $Z$, $p'$);
    - the three-token running example (cat, dog, fish) that we will compute by hand and by code;
    - the letter swap between the two original papers, and how to stay safe from it.
    """),
    md("""
    ## The idea in one paragraph

    A big language model (the **target**) is slow because it writes one token per forward
    pass. Speculative decoding lets a small, cheap model (the **draft**) guess the next few
    tokens, and then asks the target to *check* all the guesses in a single forward pass.
    Guesses the target is happy with are kept for free; at the first guess it is unhappy
    with, a corrected token is drawn and the rest are thrown away.

    Two groups found this independently at about the same time: Leviathan et al. at Google
    (late 2022) and Chen et al. at DeepMind (early 2023). Both proved the same remarkable
    fact, which this whole series is about:

    > **The tokens that come out are distributed exactly as if you had sampled from the
    > target alone.** Not approximately, not "close enough": exactly.

    You will see this property called *lossless*, *distribution-preserving*, *exact* or
    *unbiased*. They all mean the same thing: the speed-up does not quietly change the
    distribution you asked for.
    """),
    md("""
    ## Why the guarantee has to hold

    It is tempting to think "a small bias would be fine, the text still looks good". Two
    kinds of users show why it is not:

    | Setting | What goes wrong if the output distribution drifts |
    |---|---|
    | **Inference serving** (answers for users) | Users receive samples from a distribution that is *not* the model you evaluated. Headline metrics (BLEU, ROUGE, pass@k) may hardly move, yet the diversity of answers and the probability of rare tokens change, by an amount nobody measured. |
    | **RL post-training** (RLHF, PPO, GRPO rollouts) | The learning rule assumes the rollouts were sampled from the current policy. If the sampler drifts, rewards and advantages are credited to the wrong probabilities and the importance-ratio corrections of PPO/GRPO are computed against the wrong distribution. This is why work that speeds up rollouts with speculative decoding (NeMo-RL, ReSpec, SPEC-RL, ...) treats losslessness as a hard requirement. |

    For RL in particular, the guarantee is not a nice extra: it is what makes speculative
    decoding usable at all. The rest of the series answers one question: **why, mathematically,
    does it hold?**
    """),
    md("""
    ## What exactly we are going to prove

    Fix the text written so far (the *prefix*, e.g. "The weather today is"). The target
    model gives a probability for every possible next token; call that distribution $p$.
    The draft model, looking at the same prefix, gives its own distribution $q$. One
    speculative step does three things:

    1. draw a candidate token $t$ from the draft's distribution $q$;
    2. flip a (biased) coin to decide whether to **keep** $t$ or **throw it away**;
    3. if it was thrown away, draw a replacement from a specially *corrected* distribution.

    The claim: whatever path is taken, the token that comes out has probability exactly
    $p(x)$ of being $x$, for every token $x$. Notebooks 4 and 5 state and prove this.
    """),
    md("""
    ## Notation (every later notebook uses these names)

    | Symbol | Meaning in plain words |
    |---|---|
    | vocab | The set of possible tokens. We use a toy vocabulary with three tokens: cat, dog, fish. |
    | $x$ | One particular token. "Sum over $x$" means: do it for cat, for dog and for fish, and add up. |
    | prefix | The text generated so far. We mostly leave it out, because we look at one next token at a time. |
    | $p(x)$ | **Target** probability that the next token is $x$. $p(\\text{cat}) = 0.6$ means the target thinks "cat" comes next 60% of the time. |
    | $q(x)$ | **Draft** probability of $x$, for the same prefix. |
    | $t$ | The candidate token drawn from $q$ (a concrete value, such as $t = \\text{dog}$). |
    | $a(x)$ | Acceptance probability: $a(x) = \\min\\big(1,\\ p(x)/q(x)\\big)$. If the candidate is $x$, keep it with probability $a(x)$. |
    | $r$ | A uniform random number in $[0, 1)$. "Keep $t$ if $r < p(t)/q(t)$" is the same as "keep with probability $a(t)$". |
    | $(p-q)^+(x)$ | The *positive part* $\\max\\big(0,\\ p(x) - q(x)\\big)$: how much more the target wants $x$ than the draft offered; 0 where the draft already offers enough. |
    | $Z$ | $\\sum_x (p-q)^+(x)$: the total of those positive parts, used to turn them into a probability distribution. |
    | $p'(x)$ | $(p-q)^+(x) / Z$: the distribution a replacement token is drawn from after a rejection. |
    | $P(\\dots)$ | The probability of an event. $P(\\text{out}=\\text{cat} \\wedge \\text{accept})$ is the probability that the output is cat **and** the draft was kept. |
    | $\\min(p, q)(x)$ | Short for $\\min\\big(p(x), q(x)\\big)$: the smaller of the two probabilities at $x$. |

    The Python names follow the table: `sv.acceptance_prob` is $a(x)$, `sv.residual` is
    $(p-q)^+$, `sv.rejection_mass` is $Z$, `sv.resample_dist` is $p'$, `sv.overlap` is
    $\\min(p,q)$.
    """),
    md("""
    ## The running example: cat, dog, fish

    Most of the series uses one tiny pair of distributions so that every probability can be
    written down, added up and drawn. It ships with specviz as `TUTORIAL_P` (target) and
    `TUTORIAL_Q` (draft):
    """),
    code(SETUP),
    md("""
    The target's favourite is **cat**; the draft's favourite is **dog**. Let us measure, per
    token, who offers more:
    """),
    code("""
    diff = np.array(q) - np.array(p)                      # > 0: the draft over-proposes x
    print(f"{'x':<6}{'p(x)':>8}{'q(x)':>8}{'q - p':>9}   who offers more")
    for x, pi, qi, d in zip(vocab, p, q, diff):
        who = "draft" if d > 1e-12 else "target" if d < -1e-12 else "equal"
        print(f"{x:<6}{pi:>8.2f}{qi:>8.2f}{d:>+9.2f}   {who}")
    print("largest disagreement at:", vocab[int(np.argmax(abs(diff)))])
    print("both sum to 1:", np.isclose(sum(p), 1), np.isclose(sum(q), 1))
    """),
    md("""
    So the draft *over-proposes* dog (by 0.2), *under-proposes* cat (by 0.2), and agrees
    exactly on fish. Keep these three situations in mind: the whole algorithm is about
    treating "draft offers too much" and "draft offers too little" differently.

    ### A first look: run it and count

    Before any proof, here is the claim in action. `sv.spec_sample` runs many independent
    speculative steps on this pair (draw from $q$, accept or reject, replace) and records
    what came out.
    """),
    code("""
    run = sv.spec_sample(p, q, n=100_000, seed=0)
    print(f"{'x':<6}{'target p(x)':>12}{'draft q(x)':>12}{'spec output':>13}")
    for x, pi, qi, e in zip(vocab, p, q, run.empirical()):
        print(f"{x:<6}{pi:>12.3f}{qi:>12.3f}{e:>13.3f}")
    print(f"drafts kept: {run.acceptance:.3f} of the time")
    """),
    md("""
    The drafts come from $q$ (dog most often), yet the output frequencies match $p$ (cat
    most often). The figure shows the same thing; the next notebooks explain why it must
    happen, and notebook 5 turns the explanation into a proof.
    """),
    code("""
    sv.figures.empirical_figure(p, run, vocab=vocab)
    """),
    md("""
    ## Warning: the two papers swap the letters

    Leviathan et al. write $p$ for the **target** and $q$ for the **draft**. Chen et al. use
    the opposite: $p$ is the draft and $q$ the target. vLLM, the EAGLE family and this
    series follow Leviathan (though some vLLM docstrings follow Chen). When you read a
    formula elsewhere, first find out which letter is which.

    Every specviz function takes `(p, q)` = `(target, draft)`. Swapping the arguments does
    not raise an error; it silently answers a different question. Watch what the exact
    output distribution becomes:
    """),
    code("""
    print("output with (target, draft) :", sv.output_dist(p, q).round(6))
    print("output with the pair swapped:", sv.output_dist(q, p).round(6), " <- this is q, the draft!")
    """),
    md("""
    With the arguments swapped, the algorithm faithfully reproduces... the draft. It is
    still "lossless", just with respect to the wrong model. A swap like this in real code
    (a ratio written as $q/p$ instead of $p/q$) is one of the bugs notebook 7 catches.
    """),
    check_yourself(
        """
        1. A colleague says: *"Our speculative decoder is lossless: BLEU and pass@1 did not
           change."* Is that evidence of losslessness?
        2. A paper you are reading accepts the draft token with probability
           $\\min(1, q(x)/p(x))$. Is that a different algorithm?
        """,
        """
        1. No. Lossless is a statement about the **whole output distribution**. Aggregate
           quality metrics are insensitive to many changes (for example, rarer tokens becoming
           rarer still). You need a test of the distribution itself, such as `sv.audit`
           (notebook 7) or an exact computation such as `sv.output_dist`.
        2. Probably not: it is most likely Chen et al.'s letters, where $q$ is the target and
           $p$ the draft. Rewritten in our letters it is $\\min(1, p(x)/q(x))$. Check which
           model each letter is before concluding anything.
        """,
    ),
    md("""
    ## Summary

    - Speculative decoding: a draft proposes, the target verifies several tokens in one pass.
    - **Lossless** means the output tokens follow the target distribution $p$ *exactly*.
    - Serving needs it so users get the model you evaluated; RL needs it so rollouts are
      on-policy.
    - Notation: $p$ = target, $q$ = draft, $a(x) = \\min(1, p/q)$, $(p-q)^+$,
      $Z = \\sum (p-q)^+$, $p' = (p-q)^+/Z$.
    - Running example: $p = (0.6, 0.3, 0.1)$, $q = (0.4, 0.5, 0.1)$ over cat, dog, fish.
    - Chen et al. swap $p$ and $q$; specviz always takes `(target, draft)`.

    **Next:** [2 · Importance sampling](02_importance_sampling.ipynb), where the idea comes from.
    """),
]

# --------------------------------------------------------------------------- 02

NB02 = [
    md("""
    # 2 · Where the idea comes from: importance sampling

    *specviz tutorial, part 2 of 10.*

    **What you will learn**

    - the problem importance sampling (IS) solves, and the one-line trick behind it;
    - the importance weights $p/q$ of the running example: 1.5, 0.6 and 1.0;
    - why IS gives you **averages**, while a decoder needs actual **tokens**;
    - what IS cannot see: tokens the draft never proposes.
    """),
    code(SETUP),
    md("""
    ## The problem IS solves

    Suppose you want an *average under the target*: the expected value of some score
    $f(x)$ when $x$ is drawn from $p$ (think: the average reward of the target's next
    token). Written out, that is a weighted sum:

    $$\\mathbb{E}_p[f] = \\sum_x p(x)\\, f(x).$$

    The catch: drawing from $p$ is expensive (or impossible), but drawing from $q$ is cheap.
    IS multiplies each term by $q(x)/q(x)$, which is just 1, and regroups:

    $$\\sum_x p(x)\\, f(x) \\;=\\; \\sum_x q(x)\\, \\frac{p(x)}{q(x)}\\, f(x) \\;=\\; \\mathbb{E}_q\\!\\left[\\frac{p}{q}\\, f\\right].$$

    In words: draw samples $x_1, x_2, \\dots$ from $q$, multiply each score $f(x_i)$ by the
    **importance weight** $w(x_i) = p(x_i)/q(x_i)$, and average. That average is an
    unbiased estimate of the target average.

    An analogy: you wanted the target's opinion, but you only got to interview the draft.
    So you re-weight each of the draft's answers by how much more (or less) the target
    would have given that answer.
    """),
    md("""
    ## The weights of the running example
    """),
    code("""
    w = sv.importance_weights(p, q)
    print(f"{'x':<6}{'p(x)':>8}{'q(x)':>8}{'w = p/q':>10}   meaning")
    for x, pi, qi, wi in zip(vocab, p, q, w):
        meaning = ("target wants it more" if wi > 1 + 1e-12 else
                   "target wants it less" if wi < 1 - 1e-12 else "both agree")
        print(f"{x:<6}{pi:>8.2f}{qi:>8.2f}{wi:>10.2f}   {meaning}")
    """),
    md("""
    A weight above 1 (cat) says the target wants this token *more* than the draft offers it;
    below 1 (dog), *less*; exactly 1 (fish), the two agree. Keep these ratios in mind: the
    accept/reject rule of speculative decoding is built from exactly these numbers.

    ## IS in action

    Take the score $f$ = "is the token cat?" (1 for cat, 0 otherwise). Its target average is
    just $p(\\text{cat})$. `sv.importance_estimate` draws from the **draft** only and returns
    the running IS estimate after each sample:
    """),
    code("""
    f = np.array([1.0, 0.0, 0.0])                   # score: 1 if the token is cat
    exact = float(np.dot(p, f))                    # E_p[f], the number we are after
    naive = float(np.dot(q, f))                    # what a plain average over draft samples tends to
    est = sv.importance_estimate(f, p, q, n=100_000, seed=0)
    print(f"target average E_p[f] = {exact:.3f};  naive draft average -> {naive:.3f}")
    for n in (10, 100, 1_000, 10_000, 100_000):
        print(f"IS estimate after {n:>7,} draft samples: {est[n - 1]:.4f}")
    """),
    md("""
    The estimate converges to the target's 0.6 although every sample came from the draft,
    while the plain average of draft samples would settle at the draft's 0.4.
    """),
    code("""
    sv.figures.importance_figure(p, q, f=f, n=20_000, seed=0, vocab=vocab)
    """),
    md("""
    ## Why IS alone cannot drive a decoder

    Look at what IS actually hands you: the **samples are still draft samples**. Re-weighting
    changes the *average*, not *which tokens you hold*:
    """),
    code("""
    drafts = sv.spec_sample(p, q, n=100_000, seed=1).drafts     # the tokens drawn from q
    share = np.bincount(drafts, minlength=len(vocab)) / len(drafts)
    for x, s, qi, wi in zip(vocab, share, q, sv.importance_weights(p, q)):
        print(f"{x:<6} share among draft samples {s:.3f} (q = {qi:.2f}), each carries weight {wi:.2f}")
    """),
    md("""
    Roughly 40% of the tokens you hold are cats, not 60%. A decoder must append an actual
    token to the text: it cannot append "a cat with weight 1.5". An RL rollout needs real
    sampled sequences too, not a weighted average over them. So IS answers *"what is the
    target's average score?"* but not *"give me a token from the target"*.

    Two further weaknesses matter for language models:

    - **Variance.** Where $q(x)$ is tiny but $p(x)$ is not, the weight $p/q$ is huge and a
      single lucky sample swings the estimate.
    - **Blind spots.** A token the draft *never* proposes ($q(x) = 0$) never appears in the
      samples, so its target mass is simply missing from every estimate:
    """),
    code("""
    q_blind = (0.5, 0.5, 0.0)                                 # a draft that never says fish
    print("target mass IS cannot see:", sv.importance_bias_mass(p, q_blind))
    fish = np.array([0.0, 0.0, 1.0])
    est = sv.importance_estimate(fish, p, q_blind, n=100_000, seed=0)
    print(f"IS estimate of p(fish) after 100,000 samples: {est[-1]:.3f} (true value {p[2]})")
    """),
    md("""
    Turning the re-weighting idea into a way of producing genuine samples is the job of
    **rejection sampling**, the next notebook. Speculative decoding is a clever variant of it.
    """),
    check_yourself(
        """
        1. You draw 1,000 tokens from the draft $q$ of the running example and attach the
           importance weights. About how many of the tokens you hold are "cat"?
        2. What is the average weight $\\mathbb{E}_q[w]$ when $q(x) > 0$ wherever $p(x) > 0$?
        """,
        """
        1. About 400: the tokens are draft samples and $q(\\text{cat}) = 0.4$. The weights
           (1.5 on each cat) only correct *averages* computed from them. This is exactly why
           IS does not give you samples from $p$.
        2. Exactly 1: $\\sum_x q(x) \\cdot p(x)/q(x) = \\sum_x p(x) = 1$. (If the draft misses
           some tokens, it is 1 minus the target mass on those tokens; compare
           `sv.importance_bias_mass`.)
        """,
    ),
    md("""
    ## Summary

    - IS estimates target averages from draft samples by weighting each sample with $w = p/q$.
    - Running example: $w = (1.5, 0.6, 1.0)$ for cat, dog, fish.
    - IS yields **expectations, not samples**: the tokens you hold are still distributed as $q$.
    - Large weights mean high variance; tokens with $q = 0$ are invisible to IS.

    **Next:** [3 · Rejection sampling](03_rejection_sampling.ipynb), which turns weights into real samples.
    """),
]

# --------------------------------------------------------------------------- 03

NB03 = [
    md("""
    # 3 · Rejection sampling: from weights to real samples

    *specviz tutorial, part 3 of 10.*

    **What you will learn**

    - classic rejection sampling with an *envelope* constant $M$, and why it is exact;
    - its cost: on average $M$ draws per accepted sample;
    - why it is hopeless for language models ($M$ is unknown per prefix and can be enormous);
    - the small change that gives speculative decoding's rule $a(x) = \\min(1, p/q)$.
    """),
    code(SETUP),
    md("""
    ## The classic algorithm

    Setting: you want samples from $p$ but can only draw from $q$. Suppose you know a
    number $M \\ge 1$ with $M\\,q(x) \\ge p(x)$ for **every** $x$: the stretched draft
    $M q$ is a "tent" that covers $p$ everywhere. Then repeat:

    1. draw $x$ from $q$;
    2. draw a uniform $r$ in $[0, 1)$;
    3. if $r < p(x) / (M q(x))$, output $x$ and stop; otherwise **start over**.

    Why it works, in one sentence: the chance of drawing $x$ *and* keeping it is
    $q(x) \\cdot p(x)/(M q(x)) = p(x)/M$, which is proportional to $p(x)$; after the
    restarts the proportionality constant disappears and what remains is exactly $p$.
    The price: each try succeeds with probability $1/M$, so you need $M$ tries on average.

    The smallest valid tent is $M = \\max_x p(x)/q(x)$, the largest importance weight.
    """),
    code("""
    M = sv.envelope_constant(p, q)
    print(f"envelope M = max p/q = {M:.3f}  (set by {vocab[int(np.argmax(sv.importance_weights(p, q)))]})")
    print(f"chance a try is accepted = {sv.rejection_acceptance(p, q):.4f}  (= 1/M)")
    print("exact output distribution:", sv.rejection_output_dist(p, q).round(6), " (= p)")
    """),
    md("""
    Now run it. `sv.rejection_sample` returns the output tokens and how many tries each
    one needed:
    """),
    code("""
    tokens, tries = sv.rejection_sample(p, q, n=100_000, seed=0)
    freq = np.bincount(tokens, minlength=len(vocab)) / len(tokens)
    print("output frequencies:", freq.round(3), " target p:", p)
    print(f"average tries per output token: {tries.mean():.3f}  (theory: M = {M:.3f})")
    print("most tries any one token needed:", int(tries.max()))
    """),
    code("""
    sv.figures.rejection_figure(p, q, vocab=vocab)
    """),
    md("""
    ### The tent must really cover

    If $M$ is too small, the tent dips below $p$ somewhere and the output is the *clipped*
    shape $\\min(p, Mq)$, renormalised, instead of $p$. With $M = 1.2$ the cat column gets
    clipped:
    """),
    code("""
    for M_try in (1.2, 1.5, 3.0):
        out = sv.rejection_output_dist(p, q, M=M_try)
        print(f"M = {M_try}: output {out.round(4)}  TV from p = {sv.tv_distance(out, p):.4f}, "
              f"per-try acceptance {sv.rejection_acceptance(p, q, M=M_try):.3f}")
    """),
    md("""
    Note the trade-off: a *bigger* $M$ than necessary is still exact, just slower.

    ## Why this is hopeless for a language model

    Three problems, each fatal on its own:

    1. **You must know $M$ in advance.** $M$ is the largest $p/q$ over the *entire*
       vocabulary (tens of thousands of tokens), and it changes with every prefix.
    2. **$M$ explodes.** One token that the draft nearly rules out, but the target finds
       plausible, makes $p/q$ enormous, and the acceptance rate $1/M$ collapses.
    3. **Retries are unbounded.** "Start over" can happen many times in a row, which is
       the opposite of what a latency optimisation wants.

    Here is problem 2 on our example: the draft almost never says fish.
    """),
    code("""
    q_shy = (0.4, 0.5999, 0.0001)    # the draft nearly rules out fish; p(fish) is still 0.1
    print(f"envelope M                       = {sv.envelope_constant(p, q_shy):,.0f}")
    print(f"rejection sampling: accept/try   = {sv.rejection_acceptance(p, q_shy):.4f}")
    print(f"speculative decoding: P(accept)  = {sv.acceptance_rate(p, q_shy):.4f}")
    print("speculative output is still p   :", sv.output_dist(p, q_shy).round(6))
    q_blind = (0.5, 0.5, 0.0)        # the draft never says fish at all
    print(f"\\nwith q(fish) = 0: envelope M = {sv.envelope_constant(p, q_blind)} -> rejection sampling impossible")
    print("speculative output is still p   :", sv.output_dist(p, q_blind).round(6))
    """),
    md("""
    One rare token drags classic rejection sampling down to about one success per thousand
    tries, and a token with $q = 0$ makes it impossible. Speculative decoding keeps most
    drafts and stays exact in both cases. How?

    ## The fix: no tent, and a one-shot repair

    Leviathan and Chen observed that you do not need to cover $p$ at all. Look at each
    token separately:

    - where the draft offers **too little** ($q(x) \\le p(x)$): a drafted $x$ is always
      welcome, **keep it**;
    - where the draft offers **too much** ($q(x) > p(x)$): keep only the fraction $p(x)/q(x)$
      of those drafts.

    Both cases fit in one formula, the acceptance probability

    $$a(x) = \\min\\!\\left(1,\\ \\frac{p(x)}{q(x)}\\right).$$

    Instead of "reject and start over", a rejection is repaired **once**, by drawing from
    the shortfall: the tokens where the target wanted more than the draft gave. That
    repair is notebook 4. Here is $a(x)$ for the running example:
    """),
    code("""
    ratio, a = sv.importance_weights(p, q), sv.acceptance_prob(p, q)
    print(f"{'x':<6}{'p/q':>7}{'a(x) = min(1, p/q)':>21}")
    for x, r_, a_ in zip(vocab, ratio, a):
        print(f"{x:<6}{r_:>7.2f}{a_:>21.2f}" + ("   <- clipped to 1" if r_ > 1 else ""))
    """),
    md("""
    Cat's ratio 1.5 is clipped to 1 (always keep a drafted cat); dog is kept 60% of the
    time; fish always. No constant $M$, no restarts.
    """),
    code("""
    sv.figures.acceptance_figure(p, q, vocab=vocab)
    """),
    check_yourself(
        """
        On the running example, classic rejection sampling uses $M = 1.5$.

        1. On average, how many draft tokens does it consume per output token?
        2. How many does one speculative step consume, and how often does it need a second draw?
        """,
        """
        1. $M = 1.5$ draws on average (each try succeeds with probability $1/M = 2/3$), and
           occasionally many more: the number of tries is unbounded.
        2. Exactly one draft token per output token. With probability $P(\\text{reject}) = 0.2$
           it additionally draws one replacement from the residual distribution, and that
           draw needs no new model call (the target's $p$ was already computed). It never
           starts over.
        """,
    ),
    md("""
    ## Summary

    - Classic rejection sampling is exact when $Mq \\ge p$ everywhere, and costs $M$ tries
      per sample on average.
    - For LLMs, $M$ is unknown, changes per prefix and explodes when the draft nearly misses
      a plausible token (it is infinite when $q(x) = 0 < p(x)$).
    - Speculative decoding drops the tent: keep with $a(x) = \\min(1, p/q)$ and repair a
      rejection once, from the shortfall. For cat/dog/fish: $a = (1, 0.6, 1)$.

    **Next:** [4 · The algorithm and the theorem](04_the_algorithm_and_theorem.ipynb).
    """),
]

# --------------------------------------------------------------------------- 04

NB04 = [
    md("""
    # 4 · The algorithm and the theorem

    *specviz tutorial, part 4 of 10.*

    **What you will learn**

    - the one-token speculative step ("SpecSampleOne"), written as an engineer would code it;
    - the repair distribution $p'(x) = (p(x) - q(x))^+ / Z$ and why, in our example, it is
      all on cat;
    - the statement of the theorem: the output is distributed exactly as $p$;
    - how to check the theorem by simulation, with a live Monte-Carlo app.
    """),
    code(SETUP),
    md("""
    ## SpecSampleOne: one speculative step

    Given the target distribution $p$ and the draft distribution $q$ for the same prefix:

    1. **Propose.** Draw a candidate $t$ from $q$.
    2. **Test.** Draw an independent uniform $r$ in $[0, 1)$. If $r < p(t)/q(t)$, which
       happens with probability $a(t) = \\min(1, p(t)/q(t))$, **accept**: output $t$.
    3. **Repair.** Otherwise output a token drawn from the residual distribution
       $$p'(x) = \\frac{\\max\\big(0,\\ p(x) - q(x)\\big)}{Z}, \\qquad Z = \\sum_x \\max\\big(0,\\ p(x) - q(x)\\big).$$

    Implementation notes:

    - The test $r < p(t)/q(t)$ is usually written without a division, $r \\cdot q(t) < p(t)$;
      vLLM additionally rejects when $q(t) = 0$ (such a token cannot have been drafted, so
      this only guards against garbage input).
    - Whether you write `<` or `<=` does not matter: $r$ equals the threshold with
      probability 0.
    - In the real algorithm the target's $p$ comes "for free" from the verification forward
      pass; the repair costs one extra draw from a vector you already have.

    The repair distribution for our example:
    """),
    code("""
    res, Z, p_prime = sv.residual(p, q), sv.rejection_mass(p, q), sv.resample_dist(p, q)
    print(f"{'x':<6}{'p - q':>8}{'(p - q)+':>10}{'p_prime':>9}")
    for x, pi, qi, r_, pp in zip(vocab, p, q, res, p_prime):
        print(f"{x:<6}{pi - qi:>+8.2f}{r_:>10.2f}{pp:>9.2f}")
    print(f"Z = sum of (p - q)+ = {Z:.2f}")
    """),
    md("""
    Only cat has a shortfall (the target wants 0.2 more of it than the draft offers), so
    **after any rejection, the output is cat**, with certainty. That sounds odd ("the
    draft proposed dog, we rejected it, and we always say cat?") but it is exactly right:
    cat is the only token whose target probability the accept path cannot reach on its
    own. Notebook 5 shows that this is the whole trick.

    ## The theorem

    > **Theorem** (Leviathan et al. 2023, Appendix A.1; Chen et al. 2023, Theorem 1).
    > For any two distributions $p$ and $q$ over the same vocabulary, the token returned by
    > SpecSampleOne is distributed according to $p$:
    > $$P(\\text{output} = x) = p(x) \\quad \\text{for every token } x.$$

    The step is a fork with two branches, "draw $t$ and keep it" or "reject and repair".
    The theorem says that however the probability splits between the two branches, the
    branches add up to exactly $p(x)$ for every $x$.

    No condition on $q$ is needed: it does not have to cover $p$, be close to $p$, or be
    positive everywhere. How close $q$ is to $p$ only changes the **speed** (how often
    drafts are kept), never the **distribution**.

    ## Check it by running

    `sv.spec_sample` is a vectorised implementation of exactly the three steps above. It
    records, for every step, the drafted token, whether it was kept, and the output.
    """),
    code("""
    run = sv.spec_sample(p, q, n=200_000, seed=0)
    n = len(run.tokens)
    drafted = np.bincount(run.drafts, minlength=3) / n
    print(f"{'x':<6}{'drafted':>9}{'(q)':>6}{'kept':>8}{'(min)':>7}{'repaired':>10}{'((p-q)+)':>10}{'output':>8}{'(p)':>6}")
    for i, x in enumerate(vocab):
        print(f"{x:<6}{drafted[i]:>9.3f}{q[i]:>6.2f}{run.accepted_counts()[i] / n:>8.3f}"
              f"{sv.overlap(p, q)[i]:>7.2f}{run.rejected_counts()[i] / n:>10.3f}"
              f"{sv.residual(p, q)[i]:>10.2f}{run.empirical()[i]:>8.3f}{p[i]:>6.2f}")
    print(f"fraction of drafts kept: {run.acceptance:.4f}  (theory: {sv.acceptance_rate(p, q):.2f})")
    """),
    md("""
    Read the table column by column (the values in brackets are the exact predictions,
    which notebook 5 derives):

    - **drafted** follows the draft $q$: dog is proposed most;
    - **kept** per token is $\\min(p, q)$: 0.4, 0.3, 0.1;
    - **repaired** lands only on cat, with total mass $Z = 0.2$;
    - **output** = kept + repaired follows the target $p$.

    The same split as a figure: bars are measured, markers and outlines are exact.
    """),
    code("""
    sv.figures.monte_carlo_figure(p, q, sample=run, vocab=vocab)
    """),
    md("""
    The same algorithm in torch, as a serving kernel would batch it (one row per request):

    """),
    code("""
    import torch

    B = 100_000
    pt = torch.tensor(p, dtype=torch.float64).expand(B, 3)   # (B, V) target rows
    qt = torch.tensor(q, dtype=torch.float64).expand(B, 3)   # (B, V) draft rows
    out = sv.spec_sample_torch(pt, qt, generator=torch.Generator().manual_seed(0))
    print("torch output frequencies:", (torch.bincount(out.tokens, minlength=3) / B).numpy().round(3))
    print("torch acceptance        :", round(out.accepted.double().mean().item(), 3))
    """),
    md("""
    ### How close is "close"? Sampling noise versus bias

    A simulation never matches $p$ perfectly: with $n$ samples the empirical frequencies
    wobble by about $1/\\sqrt{n}$. The honest test (it is how vLLM tests its sampler) is
    to watch the distance to $p$ as $n$ grows. For the lossless rule, the total variation
    distance keeps shrinking along the $1/\\sqrt{n}$ reference line. For a wrong rule (here
    the "repair from $p$" pitfall of notebook 7) it stops shrinking at the rule's exact
    bias, however many samples you add.
    """),
    code("""
    sv.figures.convergence_figure(p, q, ns=(10, 100, 1_000, 10_000, 100_000), rule=["lossless", "resample_target"])
    """),
    md("""
    ### Interactive: run it yourself

    Set $p$ and $q$ with the sliders, choose the number of steps $N$ and press **Run**. The
    bars fill up in two colours: accepted drafts (they converge to $\\min(p, q)$) and
    repaired tokens (they converge to $(p - q)^+$); together they land on the red outline
    $p$. The audit's verdict appears below. Switch the rule to a pitfall from notebook 7 and
    watch the verdict flip.
    """),
    code("""
    sv.monte_carlo_app(p, q, vocab=vocab)
    """),
    check_yourself(
        """
        In the running example the draft proposes $t = \\text{dog}$.

        1. The uniform number is $r = 0.7$. What is the output?
        2. And with $r = 0.5$?
        3. Can the output ever be fish after a rejection?
        """,
        """
        1. $a(\\text{dog}) = \\min(1, 0.3/0.5) = 0.6$ and $0.7 \\ge 0.6$, so dog is rejected.
           The repair draws from $p' = (1, 0, 0)$: the output is **cat**.
        2. $0.5 < 0.6$: dog is **accepted** and output.
        3. No. $p(\\text{fish}) = q(\\text{fish})$, so fish has no shortfall and
           $p'(\\text{fish}) = 0$. Every fish in the output comes from an accepted fish draft.
        """,
    ),
    md("""
    ## Summary

    - One speculative step: draft $t \\sim q$; keep it if $r < p(t)/q(t)$; otherwise draw
      from $p' = (p - q)^+ / Z$.
    - Running example: $a = (1, 0.6, 1)$, $(p-q)^+ = (0.2, 0, 0)$, $Z = 0.2$,
      $p' = (1, 0, 0)$: every rejection outputs cat.
    - Theorem: the output is distributed exactly as $p$, for any $q$. The quality of $q$
      affects speed only.

    **Next:** [5 · The proof in three steps](05_the_proof_in_three_steps.ipynb).
    """),
]

# --------------------------------------------------------------------------- 05

NB05 = [
    md("""
    # 5 · The proof in three steps

    *specviz tutorial, part 5 of 10.* This is the core of the series.

    **What you will learn**

    - how to split "the output is $x$" into an accept part and a reject part;
    - **Step 1:** the accept part is $\\min(p(x), q(x))$;
    - **Step 2:** the probability of a rejection is $1 - \\sum_x \\min(p, q)$, the total
      variation distance;
    - **Step 3:** the normaliser $Z$ *equals* the rejection probability, so it cancels, and
      the reject part is $(p - q)^+(x)$;
    - the "money equation" $\\min(p, q) + (p - q)^+ = p$, checked in exact arithmetic.

    Each step comes as (a) the algebra, (b) the intuition, (c) a check on cat/dog/fish.
    """),
    code(SETUP),
    code(EXACT),
    md("""
    ## The strategy

    Pick any token $x$. The output can be $x$ in two ways that cannot both happen: the draft
    was $x$ and was **kept**, or the draft was **rejected** and the repair drew $x$. So

    $$P(\\text{out} = x) = P(\\text{out} = x \\wedge \\text{accept}) + P(\\text{out} = x \\wedge \\text{reject}).$$

    We compute the two terms separately and add them.

    ## Step 1 · The accept part

    **(a) Algebra.** To output $x$ through the accept branch, the draft must propose $x$
    (probability $q(x)$) *and* the test must keep it (probability $a(x)$). The two draws are
    independent, so the probabilities multiply:

    $$P(\\text{out} = x \\wedge \\text{accept}) = q(x) \\cdot \\min\\!\\left(1, \\frac{p(x)}{q(x)}\\right).$$

    Split on which of $p(x)$, $q(x)$ is larger:

    - if $p(x) \\ge q(x)$: the min is 1, and the product is $q(x)$;
    - if $p(x) < q(x)$: the min is $p(x)/q(x)$, and the product is $p(x)$.

    Either way the product is the **smaller** of the two numbers:

    $$\\boxed{P(\\text{out} = x \\wedge \\text{accept}) = \\min\\big(p(x), q(x)\\big)}$$

    **(b) Intuition.** The accept branch delivers exactly the probability that *both*
    models agree on: the part of the two bar charts that overlaps. If either model thinks
    $x$ is unlikely, the accept branch delivers little of it.

    **(c) Check.**
    """),
    code("""
    accept_part = np.array(Q, dtype=object) * sv.acceptance_prob(P, Q)    # q(x) * a(x), exact
    print(f"{'x':<6}{'q(x)':>6}{'a(x)':>6}{'q*a':>6}{'min(p,q)':>10}")
    for x, qi, ai, qa, m in zip(vocab, Q, sv.acceptance_prob(P, Q), accept_part, sv.overlap(P, Q)):
        print(f"{x:<6}{str(qi):>6}{str(ai):>6}{str(qa):>6}{str(m):>10}")
    print("q*a == min(p, q) for every token:", all(accept_part == sv.overlap(P, Q)))
    print("total accepted mass:", sv.acceptance_rate(P, Q))
    """),
    code("""
    sv.money_diagram(p, q, vocab=vocab, step=1)
    """),
    md("""
    ## Step 2 · The probability of a rejection

    **(a) Algebra.** Add the accept parts over all tokens to get the total chance that the
    draft is kept; a rejection is everything else:

    $$P(\\text{accept}) = \\sum_x \\min\\big(p(x), q(x)\\big), \\qquad P(\\text{reject}) = 1 - \\sum_x \\min\\big(p(x), q(x)\\big).$$

    **(b) Intuition.** The rejection rate measures how far apart the two distributions are.
    Identical distributions overlap completely, so nothing is rejected; distributions with
    no token in common do not overlap at all, so everything is rejected. This quantity,
    $1 - \\sum \\min(p, q)$, is the **total variation distance** $\\mathrm{TV}(p, q) =
    \\tfrac12 \\sum_x |p(x) - q(x)|$, the single number that decides how much speculative
    decoding can speed you up.

    **(c) Check.**
    """),
    code("""
    print(f"{'x':<6}{'p(x)':>6}{'q(x)':>6}{'min(p,q)':>10}")
    for x, pi, qi, m in zip(vocab, P, Q, sv.overlap(P, Q)):
        print(f"{x:<6}{str(pi):>6}{str(qi):>6}{str(m):>10}")
    print(f"{'total':<6}{str(sum(P)):>6}{str(sum(Q)):>6}{str(sv.acceptance_rate(P, Q)):>10}")
    print()
    print("P(accept)  =", sv.acceptance_rate(P, Q))
    print("P(reject)  =", 1 - sv.acceptance_rate(P, Q))
    print("TV(p, q)   =", sv.tv_distance(P, Q))
    """),
    code("""
    sv.money_diagram(p, q, vocab=vocab, step=2)
    """),
    md("""
    ## Step 3 · The reject part, and why $Z$ cancels

    ### 3a · The normaliser $Z$ equals the rejection probability

    The repair distribution divides the shortfall $(p - q)^+$ by
    $Z = \\sum_x (p - q)^+(x)$. The key fact of the whole proof is

    $$Z = 1 - \\sum_x \\min\\big(p(x), q(x)\\big) = P(\\text{reject}).$$

    Why? For any two numbers, "the bigger one minus the smaller one" can be split in a
    useful way. For a single token:

    - if $p(x) \\ge q(x)$: $\\ p(x) - \\min(p(x), q(x)) = p(x) - q(x) = (p - q)^+(x)$;
    - if $p(x) < q(x)$: $\\ p(x) - \\min(p(x), q(x)) = p(x) - p(x) = 0 = (p - q)^+(x)$.

    So, token by token,

    $$p(x) - \\min\\big(p(x), q(x)\\big) = (p - q)^+(x).$$

    Sum this over all tokens: the left side becomes $1 - \\sum_x \\min(p, q)$ (because $p$
    sums to 1), and the right side becomes $Z$. Done.

    **Intuition.** "How much probability is rejected" and "how much shortfall has to be
    repaired" are *the same number*. That is not luck: the shortfall is defined so that it
    measures exactly what the accept branch fails to deliver.
    """),
    code("""
    lhs = [pi - m for pi, m in zip(P, sv.overlap(P, Q))]          # p - min(p, q), per token
    print("p - min(p, q) :", show(lhs))
    print("(p - q)+      :", show(sv.residual(P, Q)))
    print("Z             =", sv.rejection_mass(P, Q), "  P(reject) =", 1 - sv.acceptance_rate(P, Q))
    assert sv.rejection_mass(P, Q) == 1 - sv.acceptance_rate(P, Q)     # exact equality, no rounding
    """),
    md("""
    The identity is not special to cat/dog/fish. Here it is on about a thousand random pairs
    of 50-token distributions (the rows of `sv.random_pair` tables):
    """),
    code("""
    worst = 0.0
    for seed in range(20):
        pair = sv.random_pair(50, seed=seed, concentration=0.3)     # 51 target rows, 51 draft rows
        for target_row, draft_row in zip(pair.target, pair.draft):
            gap = abs(sv.rejection_mass(target_row, draft_row) - (1 - sv.acceptance_rate(target_row, draft_row)))
            worst = max(worst, gap)
    print(f"largest |Z - P(reject)| over {20 * 51:,} random pairs: {worst:.1e}  (floating-point rounding only)")
    """),
    md("""
    ### 3b · The reject part of each token

    After a rejection the repair draws $x$ with probability $p'(x) = (p - q)^+(x) / Z$. The
    probability of "rejected *and then* $x$" is the probability of the rejection times that
    conditional probability:

    $$P(\\text{out} = x \\wedge \\text{reject}) = P(\\text{reject}) \\cdot \\frac{(p - q)^+(x)}{Z} = Z \\cdot \\frac{(p - q)^+(x)}{Z} = (p - q)^+(x).$$

    Because of 3a, the $Z$ in front and the $Z$ underneath are the same number and cancel:

    $$\\boxed{P(\\text{out} = x \\wedge \\text{reject}) = (p - q)^+(x) = \\max\\big(0,\\ p(x) - q(x)\\big)}$$

    This is *why* the repair distribution is defined the way it is. Normalising the
    shortfall turns it into a distribution you can sample from; multiplying back by the
    rejection probability undoes the normalisation exactly.
    """),
    code("""
    reject_part = sv.rejection_mass(P, Q) * sv.resample_dist(P, Q)     # P(reject) * p'(x)
    print("P(reject) * p'(x) :", show(reject_part))
    print("(p - q)+(x)       :", show(sv.residual(P, Q)))
    print("equal, exactly    :", all(reject_part == sv.residual(P, Q)))
    """),
    md("""
    ### 3c · Add the two parts

    $$P(\\text{out} = x) = \\min\\big(p(x), q(x)\\big) + \\max\\big(0,\\ p(x) - q(x)\\big).$$

    Once more, split on which is larger:

    - if $p(x) \\ge q(x)$: $\\ q(x) + \\big(p(x) - q(x)\\big) = p(x)$;
    - if $p(x) < q(x)$: $\\ p(x) + 0 = p(x)$.

    $$\\boxed{P(\\text{out} = x) = p(x) \\text{ for every } x.} \\qquad \\blacksquare$$

    This is the **money equation**: $\\min(p, q) + (p - q)^+ = p$, token by token. The
    overlap (what both models agree on) is delivered by the accept branch; the shortfall
    (what the target wants beyond the draft) is delivered by the reject branch; together
    they rebuild $p$ with nothing missing and nothing counted twice.
    """),
    code("""
    print("min(p, q) + (p - q)+ :", show(sv.overlap(P, Q) + sv.residual(P, Q)))
    print("p                    :", show(P))
    print("exact output_dist    :", show(sv.output_dist(P, Q)))
    assert list(sv.output_dist(P, Q)) == P          # not "close": equal, as fractions
    """),
    code("""
    sv.money_diagram(p, q, vocab=vocab, step=3)
    """),
    md("""
    In the figure, each target bar (the outline) is filled by the overlap $\\min(p, q)$ plus
    the shortfall $(p - q)^+$. For cat the shortfall is 0.2; for dog and fish it is 0 and the
    overlap alone fills the bar.

    ### Interactive: the money diagram for any pair

    **Next** and **Back** step through the proof (1: the overlap, 2: the rejected draft
    mass, 3: the residual filling the gap); the sliders change $p$ and $q$; **Play** slides
    the draft from $q = p$ to a draft with no token in common with $p$. Whatever you choose,
    blue plus green always fills the red outline exactly.
    """),
    code("""
    sv.money_diagram_app(p, q, vocab=vocab, step=1)
    """),
    md("""
    ### Optional: continuous distributions

    Nothing in the proof used that there are only three tokens, or even finitely many: the
    min, the positive part and the sums all work point by point. For continuous
    distributions, replace every sum by an integral and the argument goes through word for
    word. Language models have finite vocabularies, so the discrete version is all we need.
    """),
    check_yourself(
        """
        1. Where exactly does the proof rely on normalising the shortfall by $Z$ and not by
           some other number $c$?
        2. Does the proof need $q(x) > 0$ for every token?
        """,
        """
        1. In step 3b. With a normaliser $c$, the reject part would be
           $Z \\cdot (p - q)^+(x) / c$, and the total would be
           $\\min(p, q) + (Z/c)\\,(p - q)^+$, which equals $p$ only if $c = Z$. (With $c \\ne Z$
           the "distribution" would not even sum to 1.)
        2. No. A token with $q(x) = 0$ is never drafted, so its accept part is
           $0 = \\min(p(x), 0)$, and its reject part is $(p - 0)^+ = p(x)$: all of its mass
           arrives through the repair. Try `sv.output_dist(p, (0.5, 0.5, 0.0))`.
        """,
    ),
    md("""
    ## Summary

    | Step | Statement |
    |---|---|
    | 1 | $P(x \\wedge \\text{accept}) = \\min(p, q)(x)$ |
    | 2 | $P(\\text{reject}) = 1 - \\sum \\min(p, q) = \\mathrm{TV}(p, q)$ |
    | 3a | $Z = \\sum (p - q)^+ = P(\\text{reject})$: the normaliser cancels |
    | 3b | $P(x \\wedge \\text{reject}) = Z \\cdot (p-q)^+/Z = (p - q)^+(x)$ |
    | 3c | $\\min(p, q) + (p - q)^+ = p$ |

    On cat/dog/fish:
    """),
    code("""
    j = sv.joint(P, Q)
    for step, value in {"1   P(x and accept)": show(j.accept),
                        "2   P(reject)": 1 - sv.acceptance_rate(P, Q),
                        "3a  Z": sv.rejection_mass(P, Q),
                        "3b  P(x and reject)": show(j.reject),
                        "3c  P(out = x)": show(j.output)}.items():
        print(f"{step:<22}{value}")
    """),
    md("""

    **Next:** [6 · Worked examples](06_worked_examples.ipynb): the full table, a perfect draft,
    and a hopeless one.
    """),
]

# --------------------------------------------------------------------------- 06

NB06 = [
    md("""
    # 6 · Worked examples

    *specviz tutorial, part 6 of 10.*

    **What you will learn**

    - the complete accept / reject / repair bookkeeping for cat, dog, fish, in one table;
    - example 2: a **perfect draft** ($q = p$) never rejects;
    - example 3: a **hopeless draft** (no token in common with $p$) always rejects, and is
      still exact;
    - how the acceptance rate turns into speed (a preview of notebook 8).
    """),
    code(SETUP),
    code(EXACT),
    md("""
    ## Example 1 · The full cat/dog/fish computation

    First, every ingredient per token (exact fractions, computed by specviz):
    """),
    code("""
    a, m, res = sv.acceptance_prob(P, Q), sv.overlap(P, Q), sv.residual(P, Q)
    print(f"{'x':<7}{'p(x)':>6}{'q(x)':>6}{'a(x)=min(1,p/q)':>17}{'min(p,q)':>10}{'(p-q)+':>8}")
    for row in zip(vocab, P, Q, a, m, res):
        print(f"{row[0]:<7}" + "".join(f"{str(v):>{w}}" for v, w in zip(row[1:], (6, 6, 17, 10, 8))))
    print(f"{'total':<7}{str(sum(P)):>6}{str(sum(Q)):>6}{'-':>17}"
          f"{str(sv.acceptance_rate(P, Q)):>10}{'Z=' + str(sv.rejection_mass(P, Q)):>8}")
    """),
    md("""
    **Step 1, the accept branch:** $P(x \\wedge \\text{accept}) = q(x) \\cdot a(x)$ per token.
    """),
    code("""
    for x, qi, ai in zip(vocab, Q, a):
        print(f"P(out={x} and accept) = q({x}) * a({x}) = {qi} * {ai} = {qi * ai}")
    print("P(accept) =", " + ".join(str(qi * ai) for qi, ai in zip(Q, a)), "=", sv.acceptance_rate(P, Q))
    """),
    md("""
    **Step 2, the rejection probability:** one minus the accept total.

    **Step 3, the repair:** divide the shortfall by $Z$, then multiply by $P(\\text{reject})$.
    """),
    code("""
    Z, p_prime = sv.rejection_mass(P, Q), sv.resample_dist(P, Q)
    print("P(reject) = 1 -", sv.acceptance_rate(P, Q), "=", 1 - sv.acceptance_rate(P, Q))
    for x, r_, pp in zip(vocab, res, p_prime):
        print(f"p'({x}) = {r_} / {Z} = {pp}    P(out={x} and reject) = {Z} * {pp} = {Z * pp}")
    """),
    md("""
    Once rejected, the output is cat with certainty, because cat is the only token with a
    shortfall. Now combine the branches. `sv.joint` returns both parts in one object:
    """),
    code("""
    j = sv.joint(P, Q)
    print(f"{'x':<6}{'P(x & accept)':>14}{'P(x & reject)':>15}{'P(out = x)':>12}{'p(x)':>7}  match?")
    for x, acc, rej, out, pi in zip(vocab, j.accept, j.reject, j.output, P):
        print(f"{x:<6}{str(acc):>14}{str(rej):>15}{str(out):>12}{str(pi):>7}  {'yes' if out == pi else 'NO'}")
    print(f"{'total':<6}{str(j.p_accept):>14}{str(j.p_reject):>15}{str(sum(j.output)):>12}")
    """),
    md("""
    Every row rebuilds $p(x)$ exactly. This is losslessness, computed rather than argued.
    The same bookkeeping as a figure:
    """),
    code("""
    sv.figures.joint_table(p, q, vocab=vocab)
    """),
    md("""
    ## Example 2 · A perfect draft ($q = p$)

    If the draft is exactly as good as the target, there is no shortfall anywhere: $(p - q)^+
    = 0$, so $Z = 0$ and a rejection never happens. Every draft is kept, which is the best
    case for speed. (This is why drafts that share the target's own features, such as EAGLE's
    or Medusa's heads, reach such high acceptance rates.)

    One implementation detail: $p' = (p - q)^+ / Z$ would be $0/0$ here. The branch is never
    taken, but code must not produce NaN anyway; specviz returns $p$ as a harmless stand-in.
    (Hugging Face transformers' `_speculative_sampling` has no such guard and yields NaN
    when $p = q$.)
    """),
    code("""
    print("P(accept) =", sv.acceptance_rate(P, P), "  Z =", sv.rejection_mass(P, P))
    print("p' (never used):", show(sv.resample_dist(P, P)))
    print("output = p exactly:", list(sv.output_dist(P, P)) == P)
    """),
    md("""
    ## Example 3 · A hopeless draft (disjoint support)

    Now a draft that always proposes cat, $q = (1, 0, 0)$, against a target that never says
    cat, say $p = (0, 3/4, 1/4)$. The two distributions have no token in common, so the
    overlap is zero everywhere, every draft is rejected, and the shortfall is all of $p$:
    the repair distribution *is* $p$.
    """),
    code("""
    P3, Q3 = [Fraction(0), Fraction(3, 4), Fraction(1, 4)], [Fraction(1), Fraction(0), Fraction(0)]
    print("min(p, q) :", show(sv.overlap(P3, Q3)), "  P(accept) =", sv.acceptance_rate(P3, Q3))
    print("(p - q)+  :", show(sv.residual(P3, Q3)), "  Z =", sv.rejection_mass(P3, Q3))
    print("p'        :", show(sv.resample_dist(P3, Q3)), "  (= p)")
    print("output    :", show(sv.output_dist(P3, Q3)), "  equals p:", list(sv.output_dist(P3, Q3)) == P3)
    """),
    md("""
    Every step now costs a draft call and ends with a plain draw from $p$: no speed-up at
    all, but **still exactly $p$**. Speculative decoding degrades gracefully into ordinary
    sampling; it never becomes biased, however bad the draft is.

    ## The three cases side by side

    The last column previews notebook 8: the expected number of tokens one verify step
    produces when the draft proposes $\\gamma = 4$ tokens and each is kept with the
    probability in the first column.
    """),
    code("""
    cases = {"q = p (perfect)": (P, P), "cat/dog/fish": (P, Q), "disjoint support": (P3, Q3)}
    print(f"{'case':<18}{'P(accept)':>10}{'P(reject)':>10}{'lossless?':>10}{'tokens/step (gamma=4)':>23}")
    for name, (tp, dq) in cases.items():
        acc = sv.acceptance_rate(tp, dq)
        exact = list(sv.output_dist(tp, dq)) == list(tp)
        print(f"{name:<18}{float(acc):>10.2f}{float(1 - acc):>10.2f}{'yes' if exact else 'NO':>10}"
              f"{sv.expected_tokens(float(acc), 4):>23.2f}")
    """),
    md("""
    And by simulation, with the audit from notebook 7 (a statistical test that the output
    frequencies are consistent with $p$):
    """),
    code("""
    for name, (tp, dq) in cases.items():
        tp, dq = [float(v) for v in tp], [float(v) for v in dq]
        print(f"{name:<18}", sv.audit("lossless", tp, dq, n=100_000, seed=0))
    """),
    md("""
    ### Interactive

    The preset buttons load the three cases of this notebook (and a few more). Drag $q$
    towards $p$ and the green repair shrinks to nothing; drag it away and the repair takes
    over. The total always stays equal to $p$.
    """),
    code("""
    sv.money_diagram_app(p, q, vocab=vocab)
    """),
    check_yourself(
        """
        Keep the target $p = (0.6, 0.3, 0.1)$. Find a draft $q$ for which **every rejection
        outputs fish**. What is $P(\\text{reject})$ for your $q$?
        """,
        """
        The repair only produces tokens with a shortfall, so you need $q \\ge p$ on cat and
        dog and $q < p$ on fish. For example $q = (0.7, 0.3, 0)$: then
        $(p - q)^+ = (0, 0, 0.1)$, $p' = (0, 0, 1)$, and $P(\\text{reject}) = Z = 0.1$.
        Any $q$ with $q(\\text{cat}) \\ge 0.6$, $q(\\text{dog}) \\ge 0.3$ and
        $q(\\text{fish}) < 0.1$ works, with $P(\\text{reject}) = 0.1 - q(\\text{fish})$.
        Check: `sv.resample_dist(p, (0.7, 0.3, 0.0))`.
        """,
    ),
    md("""
    ## Summary

    - Cat/dog/fish: accept parts 0.4, 0.3, 0.1 (total 0.8), rejection 0.2, repair
      $p' = (1, 0, 0)$, reject parts 0.2, 0, 0; the sums rebuild $p$ exactly.
    - Perfect draft: never rejects, maximum speed-up, exact.
    - Disjoint draft: always rejects, no speed-up, still exact.
    - Draft quality changes the **speed**, never the **distribution**.

    **Next:** [7 · Pitfalls](07_pitfalls.ipynb): plausible-looking variants that are *not* lossless.
    """),
]

# --------------------------------------------------------------------------- 07

NB07 = [
    md("""
    # 7 · Pitfalls: plausible variants that break losslessness

    *specviz tutorial, part 7 of 10.*

    **What you will learn**

    - **Q1** why the repair must not draw from $p$ itself (cat would drop to 0.52);
    - **Q2** why the repair uses $(p - q)^+$ and not $|p - q|$;
    - **Q3** why importance weights cannot replace accept/reject;
    - **Q4** a first look at the engineering traps (temperature, numerics; notebook 9 has more);
    - how `sv.audit` catches a buggy verifier, and the bugs seen in real implementations.
    """),
    code(SETUP),
    md("""
    ## Q1 · "On a rejection, why not just sample from the target $p$?"

    It feels natural: the target is the distribution we want, so draw the replacement from
    it. But the accept branch has *already* delivered the overlap $\\min(p, q)$. Drawing the
    replacement from $p$ hands out that overlap a second time, while the shortfall is
    under-served. The output becomes

    $$P(\\text{out} = x) = \\min\\big(p(x), q(x)\\big) + P(\\text{reject}) \\cdot p(x),$$

    which is not $p(x)$ in general. For cat: $0.4 + 0.2 \\times 0.6 = 0.52$ instead of 0.6.
    """),
    code("""
    wrong = sv.output_dist(p, q, rule="resample_target")
    right = sv.output_dist(p, q, rule="lossless")
    print(f"{'x':<6}{'min(p,q)':>9}{'+ P(rej)*p(x)':>15}{'= output':>10}{'target p':>10}")
    for x, m, pi, w in zip(vocab, sv.overlap(p, q), p, wrong):
        print(f"{x:<6}{m:>9.2f}{sv.rejection_mass(p, q) * pi:>15.2f}{w:>10.2f}{pi:>10.2f}")
    print(f"TV(output, p) = {sv.tv_distance(wrong, p):.2f}   (correct rule: {sv.tv_distance(right, p):.0e})")
    """),
    code("""
    sv.figures.rule_figure(p, q, "resample_target", vocab=vocab)
    """),
    md("""
    The fix is the one the proof forces: the repair must add back **only what is missing**,
    the shortfall $(p - q)^+$. (One educational repository had a "skip adjustment" switch
    that did exactly this wrong thing.)

    ## Q2 · "Why $(p - q)^+$ and not $|p - q|$?"

    On tokens where the draft over-proposes ($q > p$, like dog), the accept branch has
    already *discounted* the excess by keeping dog only 60% of the time. Nothing is missing
    there, so nothing must be added. Using $|p - q|$ adds the excess of dog back in a second
    time:
    """),
    code("""
    wrong = sv.output_dist(p, q, rule="abs_residual")
    print("|p - q|             :", np.abs(np.array(p) - np.array(q)).round(2), "-> dog gets repair mass too")
    print("output with |p - q| :", wrong.round(4))
    print("target p            :", p)
    print(f"TV from p           : {sv.tv_distance(wrong, p):.2f}")
    """),
    code("""
    sv.figures.rule_figure(p, q, "abs_residual", vocab=vocab)
    """),
    md("""
    ## Q3 · "Why not just use importance sampling?"

    Notebook 2 showed it: IS gives *averages* under $p$ from samples of $q$, and the
    samples themselves remain draft samples. A decoder must emit real tokens, and an RL
    rollout must consist of real sampled sequences. Speculative decoding keeps the ratio
    $p/q$ from IS, but turns it into a keep-or-replace decision, which produces genuine
    target samples.

    ## Q4 · "Can temperature, numerics or the KV cache break it?"

    Yes. The proof assumes that the $p$ and $q$ in the ratio are **exactly** the
    distributions the target wants and the draft token was drawn from. One common way to
    violate that: the user asks for temperature 0.7, but the target's probabilities in the
    ratio are computed at temperature 1.0:
    """),
    code("""
    target_logits, draft_logits = [2.0, 1.0, 0.0], [0.0, 1.0, 2.0]
    m = sv.mismatch_output_dist(target_logits, draft_logits, sv.Sampling(temperature=0.7),
                                target_used=sv.Sampling(temperature=1.0))
    print("wanted (T=0.7):", m.intended.round(4))
    print("produced      :", m.output.round(4))
    print(f"TV            : {m.tv:.4f}")
    """),
    md("""
    Notebook 9 goes through temperature, top-k/top-p, floating point, KV-cache precision
    and deliberately lossy rules.

    ## All the rules side by side

    specviz knows several verification rules (`sv.RULES`): the correct one, the two
    pitfalls above, two deliberately lossy relaxations, and *token matching* (draw $y \\sim p$
    and keep the draft iff it equals $y$), which is lossless but keeps fewer drafts.
    """),
    code("""
    def rule_table(tp, dq):
        print(f"{'rule (default parameters)':<28}{'lossless?':>10}{'output':>20}{'P(keep draft)':>15}{'TV from p':>11}")
        for r in sv.compare_rules(tp, dq):
            label = " ".join([r.rule] + [f"{k}={v}" for k, v in sv.RULES[r.rule].defaults.items()])
            print(f"{label:<28}{'yes' if r.lossless else 'no':>10}{str(r.output.round(3)):>20}"
                  f"{r.acceptance:>15.3f}{r.tv:>11.3f}")

    rule_table(p, q)
    """),
    md("""
    The same comparison on the pair from the field notes, $p = (0.7, 0.2, 0.1)$,
    $q = (0.1, 0.2, 0.7)$. Token matching keeps drafts with probability $\\sum p q = 0.18$
    instead of $\\sum \\min(p, q) = 0.40$, and Medusa's *typical acceptance*
    ($\\varepsilon = 0.09$, $\\delta = 0.3$) accepts every draft here, so its output is the
    draft $q$ itself, TV 0.6 from the target:
    """),
    code("""
    rule_table((0.7, 0.2, 0.1), (0.1, 0.2, 0.7))
    """),
    code("""
    sv.figures.rules_figure(p, q, vocab=vocab)
    """),
    md("""
    ## Catching bugs with `sv.audit`

    Exact formulas are great for a rule you can write down; for *your own code*, you need a
    test. `sv.audit(sampler, p, q)` runs the sampler many times and applies a chi-square
    goodness-of-fit test against $p$. It fails when the p-value falls below $\\alpha =
    10^{-3}$, so a correct sampler fails only about once in a thousand runs (with a fixed
    seed the verdict is reproducible). It also fails immediately if a token with $p(x) = 0$ or
    an id outside the vocabulary appears.

    `sv.BUGGY_VERIFIERS` holds hand-written verifiers with the bugs seen in real
    implementations:

    | name | the bug | seen in |
    |---|---|---|
    | `resample_from_p` | Q1: repair from $p$ | an educational repo's "skip adjustment" switch |
    | `abs_residual` | Q2: repair from $\\lvert p - q\\rvert$ | |
    | `lenient_0.9` | accept $\\min(1, p/(0.9\\,q))$ | "lenience" options (lossy on purpose) |
    | `inverted_ratio` | ratio $q/p$, what a Chen/Leviathan letter mix-up produces | |
    | `greedy_draft_softmax_ratio` | draft token chosen by argmax, ratio uses the softmax $q$ | transformers (since fixed) |
    | `off_by_one` | the ratio of the wrong position compared with the drafted token | several repos |
    """),
    code("""
    print(f"{'verifier':<28}{'verdict':>8}{'TV':>8}")
    for name, verifier in {"correct_verifier": sv.correct_verifier, **sv.BUGGY_VERIFIERS}.items():
        report = sv.audit(verifier, p, q, n=100_000, seed=0)
        print(f"{name:<28}{'PASS' if report.passed else 'FAIL':>8}{report.tv:>8.4f}")
    """),
    md("""
    Each bug moves the output by a few percentage points of probability: invisible when
    you read generated text, but obvious to a test with 100,000 samples. To audit your own
    verifier, give it the signature `verifier(p, q, n, rng) -> token ids` and pass it in.
    The full report explains a failure:
    """),
    code("""
    sv.audit(sv.BUGGY_VERIFIERS["greedy_draft_softmax_ratio"], p, q, n=100_000, seed=0)
    """),
    md("""
    Other bugs from the reference systems' issue trackers, which the audit would flag:

    - the residual normalised without a zero guard: NaN when $p = q$ (transformers);
    - seeding the random generator inside the per-position loop, so every uniform $r$ is the
      same;
    - rejected draft tokens left in the output; the draft cache "one token behind" after a
      fully accepted round;
    - vLLM's exponential-race sampler for the residual once let padded lanes win when the
      residual was all zero, emitting a token id outside the vocabulary (a security
      advisory). `sv.audit` fails at once on an out-of-vocabulary id.

    ### Interactive: the pitfall explorer

    Pick a rule from the drop-down (and its parameters: lenience $l$, or $\\varepsilon$ and
    $\\delta$ for typical acceptance), change $p$ and $q$, and compare the exact output (accept
    part + reject part) with the red target outline. The audit's verdict is shown too.
    """),
    code("""
    sv.pitfall_app(p, q, vocab=vocab)
    """),
    check_yourself(
        """
        1. Compute $P(\\text{out} = \\text{dog})$ under the $|p - q|$ repair by hand.
        2. Your verifier passes `sv.audit` with $n = 1{,}000$ samples but fails with
           $n = 1{,}000{,}000$. Is it lossless?
        """,
        """
        1. The accept branch gives $\\min(0.3, 0.5) = 0.3$. $|p - q| = (0.2, 0.2, 0)$ sums
           to 0.4, so the repair gives dog probability $0.2/0.4 = 0.5$, times
           $P(\\text{reject}) = 0.2$: another 0.1. Total $0.4$ instead of $0.3$.
        2. Almost certainly not. A small bias needs many samples to show up (the noise in a
           frequency shrinks like $1/\\sqrt{n}$), and a correct sampler fails only with
           probability $\\alpha = 0.001$. Trust the big sample; then look at which token the
           report says is off.
        """,
    ),
    md("""
    ## Summary

    - Repair from $p$ double-counts the overlap: cat gets 0.52 instead of 0.6.
    - Repair from $|p - q|$ adds back mass where the draft over-proposed: dog gets 0.4
      instead of 0.3.
    - IS weights give averages, not tokens.
    - Token matching is exact but keeps fewer drafts; typical acceptance and lenience are lossy.
    - `sv.audit` turns "I think my verifier is right" into a test; it catches every bug in
      `sv.BUGGY_VERIFIERS`.

    **Next:** [8 · γ-step chains and trees](08_gamma_steps_and_trees.ipynb).
    """),
]

# --------------------------------------------------------------------------- 08

NB08 = [
    md("""
    # 8 · Many tokens per step: γ-step chains, speed-up, and draft trees

    *specviz tutorial, part 8 of 10.*

    **What you will learn**

    - the real algorithm: draft $\\gamma$ tokens, verify all of them in one target pass;
    - why the one-token proof extends to whole sequences (induction over positions);
    - how to check that *sequences* come out with the target's probabilities;
    - the expected number of tokens per step, the speed-up formula and the best $\\gamma$;
    - multi-draft (SpecInfer-style) verification, and why the residual must be updated after
      each rejected draft.
    """),
    code(SETUP),
    md("""
    ## The γ-step algorithm

    1. The draft proposes $\\gamma$ tokens one after another, $x_1, \\dots, x_\\gamma$, each
       from $q(\\cdot \\mid \\text{prefix}, x_1, \\dots, x_{i-1})$.
    2. The target runs **one** forward pass over the prefix plus all drafts and obtains its
       distribution $p_i$ at each of the $\\gamma + 1$ positions.
    3. Going left to right, test $x_i$ with the one-token rule against $p_i$ and $q_i$.
    4. At the first rejection, replace that token by a draw from the residual
       $(p_i - q_i)^+ / Z_i$ and **discard all later drafts** (they were conditioned on a
       token that is no longer there).
    5. If all $\\gamma$ drafts pass, add a **bonus** token drawn from $p_{\\gamma + 1}$,
       which the target pass computed anyway.

    So one verify step emits between 1 and $\\gamma + 1$ tokens.

    **Why it stays lossless.** At position 1, the one-token theorem says the emitted token
    follows $p(\\cdot \\mid \\text{prefix})$. If it was accepted, position 2 is tested with
    $p_2$ and $q_2$ computed for *the same* extended prefix, so the theorem applies again;
    if it was rejected, the next step starts fresh from the extended prefix. By induction,
    each token follows the target given everything before it, and so the whole sequence
    follows the target's autoregressive distribution.

    ## Checking whole sequences

    `sv.tutorial_pair()` is a toy autoregressive pair: two bigram tables over cat, dog,
    fish, whose first-token distributions are the tutorial's $p$ and $q$. For such a toy,
    `sv.sequence_dist` enumerates the exact probability of **every** sequence, so the
    speculative sampler can be compared with the truth.
    """),
    code("""
    pair = sv.tutorial_pair()
    L = 3
    exact = sv.sequence_dist(pair.target, L).ravel()          # 27 sequences of 3 tokens, target
    exact_draft = sv.sequence_dist(pair.draft, L).ravel()     # the same under the draft
    print("first-token target row:", pair.target[pair.start], " draft row:", pair.draft[pair.start])
    print(f"TV(draft sequences, target sequences) = {sv.tv_distance(exact_draft, exact):.3f}")
    """),
    code("""
    n = 100_000
    spec = sv.spec_chain_sample(pair, length=L, gamma=2, n=n, seed=0)
    spec_freq = np.bincount(sv.sequence_index(spec.sequences, pair.V), minlength=exact.size) / n
    ar = sv.ar_chain_sample(pair.target, length=L, n=n, seed=1)           # plain target sampling
    ar_freq = np.bincount(sv.sequence_index(ar, pair.V), minlength=exact.size) / n
    print(f"TV(speculative, exact) = {sv.tv_distance(spec_freq, exact):.4f}")
    print(f"TV(plain target sampling, exact) = {sv.tv_distance(ar_freq, exact):.4f}   <- same size: sampling noise")
    print(f"mean tokens per verify step: {spec.tokens_per_step():.3f}")
    """),
    md("""
    The speculative sequences are exactly as close to the target as plain target samples
    are: both gaps are pure sampling noise, while the draft's own sequence distribution is
    far away. The five most likely sequences:
    """),
    code("""
    names = [" ".join(pair.vocab[i] for i in np.unravel_index(k, (pair.V,) * L)) for k in range(exact.size)]
    print(f"{'sequence':<16}{'exact p':>9}{'speculative':>13}{'draft q':>9}")
    for k in np.argsort(-exact)[:5]:
        print(f"{names[k]:<16}{exact[k]:>9.4f}{spec_freq[k]:>13.4f}{exact_draft[k]:>9.4f}")
    """),
    md("""
    A known bug, for contrast: dropping the bonus token (`bonus=False`) is still lossless,
    but emits fewer tokens per step:
    """),
    code("""
    nobonus = sv.spec_chain_sample(pair, length=L, gamma=2, n=n, seed=0, bonus=False)
    nb_freq = np.bincount(sv.sequence_index(nobonus.sequences, pair.V), minlength=exact.size) / n
    print(f"without bonus: TV = {sv.tv_distance(nb_freq, exact):.4f}, steps per sequence "
          f"{nobonus.steps.mean():.3f} vs {spec.steps.mean():.3f} with the bonus")
    """),
    md("""
    ## How many tokens per step, and how much faster?

    Assume each draft is kept with the same probability $\\alpha$ (the acceptance rate
    $\\sum \\min(p, q)$, 0.8 in our example), independently. The number of accepted drafts
    in one step is then like counting successes until the first failure, capped at
    $\\gamma$, and the expected number of tokens per verify step (Leviathan et al.) is

    $$\\mathbb{E}[\\text{tokens per step}] = \\frac{1 - \\alpha^{\\gamma + 1}}{1 - \\alpha}.$$

    If one draft forward costs $c$ times a target forward, a step costs about
    $\\gamma c + 1$ target forwards, so the expected wall-time speed-up is
    $\\frac{1 - \\alpha^{\\gamma+1}}{(1 - \\alpha)(\\gamma c + 1)}$.
    """),
    code("""
    alpha, c = sv.acceptance_rate(p, q), 0.1
    print(f"alpha = {alpha:.2f}, draft/target cost ratio c = {c}")
    print(f"{'gamma':>5}{'tokens/step':>13}{'speed-up':>10}")
    for g in range(0, 9):
        print(f"{g:>5}{sv.expected_tokens(alpha, g):>13.3f}{sv.speedup(alpha, g, c):>10.3f}")
    print("best gamma:", sv.best_gamma(alpha, c))
    """),
    md("""
    More drafts mean more tokens per step, with diminishing returns (each extra draft is
    only reached if all earlier ones passed), while each draft adds cost. The distribution
    of the number of accepted drafts:
    """),
    code("""
    dist = sv.accepted_length_dist(alpha, 4)
    for k, pk in enumerate(dist):
        print(f"P({k} of 4 drafts accepted) = {pk:.4f}")
    """),
    code("""
    sv.figures.expected_tokens_figure()
    """),
    code("""
    sv.figures.speedup_heatmap(c=c)
    """),
    code("""
    counts = sv.figures.simulate_accepted_lengths(alpha, 4, n=100_000, seed=0)   # i.i.d. acceptance, as assumed
    sv.figures.accepted_length_figure(counts, alpha, 4)
    """),
    md("""
    Because the method is lossless, a collapse of the acceptance rate (a stale draft, a
    broken cache) shows up in **no** quality metric: the output is still exactly the target
    distribution, just slower. Production systems therefore report acceptance statistics:
    vLLM's *mean acceptance length* is $1 + \\text{accepted} / \\text{verify steps}$, plus
    per-position acceptance rates. Watch those.

    ### Interactive: choose γ

    Set the acceptance rate α, the number of drafts γ and the cost ratio c; see the expected
    tokens per step, the speed-up map with the best γ marked, and a simulated histogram of
    accepted drafts next to the exact law.
    """),
    code("""
    sv.gamma_app(alpha=alpha, gamma=4, c=c)
    """),
    md("""
    ## Several drafts at once: multi-draft and trees

    SpecInfer, Medusa and EAGLE-2 let the draft propose several alternatives (a *tree*) and
    verify them all in one target pass. The verification rule has to be adapted, but the
    idea is the same. SpecInfer's rule for $k$ independent drafts $x_1, \\dots, x_k \\sim q$:

    1. start with $R := p$;
    2. for each draft in turn, accept $x_i$ with probability $\\min(1, R(x_i)/q(x_i))$;
    3. after a rejection, **update** $R := (R - q)^+ / Z$ and move to the next draft;
    4. if all drafts are rejected, draw from the final $R$.

    Each stage is exactly the one-token step with $R$ playing the target, so the output is
    exactly $p$. With the field-notes example $p = (0.5, 0.3, 0.15, 0.05)$,
    $q = (0.1, 0.2, 0.3, 0.4)$, a second draft lifts the acceptance from 0.50 to 0.65.
    **Forgetting the update** (testing every draft against the original $p$) is lossy:
    """),
    code("""
    p4, q4 = (0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4)
    print(f"{'k':>2}{'P(some draft kept)':>20}{'TV, R updated':>15}{'TV, R = p always':>18}")
    for k in range(1, 5):
        good = sv.multi_draft_output_dist(p4, q4, k)
        naive = sv.multi_draft_output_dist(p4, q4, k, update_residual=False)
        print(f"{k:>2}{sv.multi_draft_acceptance_rate(p4, q4, k):>20.4f}"
              f"{sv.tv_distance(good, p4):>15.4f}{sv.tv_distance(naive, p4):>18.4f}")
    """),
    code("""
    sim = sv.multi_draft_sample(p4, q4, n=100_000, k=2, seed=0)
    print("simulated output (k=2, R updated):", sim.empirical().round(3), " target:", p4)
    print(f"simulated acceptance: {sim.acceptance:.3f}")
    """),
    code("""
    sv.figures.multidraft_figure(p4, q4)
    """),
    md("""
    Two further details from the reference systems:

    - **Drafts without replacement.** If the $k$ drafts are drawn *without* replacement, the
      second draft's distribution is $q$ with $x_1$ removed and renormalised; using the raw
      $q$ in its ratio is lossy (the field notes report TV 0.0595 on the example above).
    - **EAGLE-2 trees** expand the draft's top-$k$ tokens deterministically (each child is a
      point mass), accept child $x$ iff $u \\le R(x)$, and otherwise set $R(x) = 0$ and
      renormalise; the bonus token comes from the final $R$. Defaults: 63 tree tokens,
      depth 5, top-$k$ 8.

    ### Interactive: multi-draft

    Change $p$, $q$ and the largest number of drafts; compare the acceptance and the
    distance from $p$ with and without the residual update.
    """),
    code("""
    sv.multidraft_app(p4, q4)
    """),
    check_yourself(
        """
        1. With $\\alpha = 0.8$ and $\\gamma = 4$, how many tokens does a verify step emit on
           average? Why not 5?
        2. In multi-draft verification, why must $R$ be updated after a rejected draft?
        """,
        """
        1. $(1 - 0.8^5)/(1 - 0.8) \\approx 3.36$. Five tokens only come out when all four
           drafts pass (probability $0.8^4 \\approx 0.41$); a rejection at position $i$ ends
           the step after $i$ tokens.
        2. A rejection of $x_1$ is *information*: given that it happened, the output must come
           from the remaining shortfall $(p - q)^+$, not from $p$ (this is Q1 of notebook 7,
           one stage later). Testing the next draft against $p$ again double-counts the
           overlap; the table above shows TV 0.15 for $k = 2$.
        """,
    ),
    md("""
    ## Summary

    - γ-step: draft γ tokens, one target pass, accept left to right, repair at the first
      rejection, bonus token if all pass; 1 to γ + 1 tokens per step.
    - Lossless for whole sequences, by applying the one-token theorem position by position.
    - Expected tokens per step $(1 - \\alpha^{\\gamma+1})/(1-\\alpha)$; speed-up divides by
      $\\gamma c + 1$; there is a best γ.
    - Multi-draft: update the residual after every rejected draft, or lose exactness.

    **Next:** [9 · When losslessness breaks](09_when_lossless_breaks.ipynb).
    """),
]

# --------------------------------------------------------------------------- 09

NB09 = [
    md("""
    # 9 · When losslessness breaks in practice

    *specviz tutorial, part 9 of 10.*

    The theorem is exact mathematics. It assumes that $p(x)$, $q(x)$ and the ratio
    $p(x)/q(x)$ are computed exactly, and that $q$ is **the** distribution the draft token
    was drawn from. Real systems bend these assumptions. Chen et al. call the result
    "lossless within hardware numerics".

    **What you will learn**

    - four ways the guarantee breaks: floating point, mismatched sampling settings,
      KV-cache precision, and deliberately lossy rules;
    - "standardised sampling": the rule that keeps temperature / top-k / top-p safe;
    - how big each effect is, on small examples you can change.
    """),
    code(SETUP),
    md("""
    | Source | What happens | Typical symptom |
    |---|---|---|
    | Floating point | $p$ and $q$ come from a softmax in fp16/bf16; for rare tokens the ratio $p/q$ can be off by a large factor | "Empirically lossless": aggregate statistics match plain sampling, single sequences may drift slightly |
    | Sampling settings differ | target and draft processed with different temperature / top-k / top-p, or the ratio uses other probabilities than the draft was sampled from | A common bug; the output leans towards the draft's style |
    | KV-cache precision | the target runs with an fp8 or quantised cache, so its $p$ is no longer the reference model's $p$ | Worse in long contexts |
    | Lossy on purpose | relaxed acceptance (lenience, typical acceptance; MARS, DropMatch, LK-Losses) | Higher acceptance, slightly different output: a deliberate trade-off |

    ## 1 · Floating point

    The ratio $p/q$ is most fragile exactly where it matters least visibly: on rare tokens,
    where both probabilities are tiny and low-precision formats have few significant bits.
    `specviz.numerics` evaluates one exact speculative step (no sampling noise) with every
    operation done in a given dtype, on a 64-token example, and separates two effects:

    - `p_tv`: how far the target's own softmax in that dtype is from the fp64 one (the
      target has changed, before any speculation);
    - `verify_tv`: how far the verifier's output is from that dtype's $p$ (the error added
      by the accept/repair arithmetic itself);
    - `out_tv`: the total, what a user sees.
    """),
    code("""
    from specviz import numerics

    t_logits, d_logits = numerics.example_logits(V=64, seed=0)
    report = numerics.precision_report(t_logits, d_logits)
    print(f"{'dtype':<10}{'p_tv':>10}{'verify_tv':>11}{'out_tv':>10}{'underflows':>12}")
    for row in report:
        print(f"{row.dtype:<10}{row.p_tv:>10.1e}{row.verify_tv:>11.1e}{row.out_tv:>10.1e}{row.underflow:>12}")
    """),
    code("""
    sv.figures.numerics_figure(t_logits, d_logits, report=report)
    """),
    md("""
    In the app, change the vocabulary size, how peaked the logits are (*logit scale*), how
    far the draft is from the target (*draft noise*), the temperature, and the draft's dtype. Peakier
    distributions have more tiny probabilities, and fp16 starts to round them to zero.
    """),
    code("""
    sv.numerics_app()
    """),
    md("""
    The practical rule: compute the softmax and the ratio in fp32 (production systems do),
    and compare against plain autoregressive sampling **with the same numerics**. A
    difference between fp32 and bf16 *models* is not a property of speculative decoding.

    ## 2 · Standardised sampling: temperature, top-k, top-p

    Sampling settings change the distribution a token is drawn from. The proof works on
    whatever distribution is *actually* sampled, so every processor (temperature, top-k,
    top-p, repetition penalty, ...) must be folded into $p$ and $q$ **before** the ratio is
    taken, identically for both models. Leviathan et al. call this *standardised sampling*;
    `sv.standardize` does the folding:
    """),
    code("""
    target_logits, draft_logits = [2.0, 1.0, 0.0], [0.0, 1.0, 2.0]
    for s in (sv.Sampling(1.0), sv.Sampling(0.7), sv.Sampling(1.0, top_k=2), sv.Sampling(0.0)):
        print(f"{str(s):<50} target p = {sv.standardize(target_logits, s.temperature, s.top_k, s.top_p).round(4)}")
    """),
    md("""
    Temperature 0 (greedy) is a one-hot, not a division by zero. Now the classic mistakes,
    each computed exactly with `sv.mismatch_output_dist`. The user asks for temperature
    0.7; in each row one ingredient is computed with different settings:
    """),
    code("""
    want = sv.Sampling(temperature=0.7)
    cases = {
        "everything at T=0.7 (correct)": {},
        "target p at T=1.0": dict(target_used=sv.Sampling(1.0)),
        "draft sampled and q at T=1.0": dict(draft_sampled=sv.Sampling(1.0)),
        "draft sampled at T=1.0, q at 0.7": dict(draft_sampled=sv.Sampling(1.0), draft_ratio=want),
        "draft greedy, q = softmax": dict(draft_sampled=sv.Sampling(0.0), draft_ratio=want),
        "draft sampled top-k=2, q = raw": dict(draft_sampled=sv.Sampling(0.7, top_k=2), draft_ratio=want),
    }
    print(f"{'what was computed differently':<36}{'output':>26}{'TV from wanted':>16}")
    for name, kw in cases.items():
        m = sv.mismatch_output_dist(target_logits, draft_logits, want, **kw)
        print(f"{name:<36}{str(m.output.round(4)):>26}{m.tv:>16.4f}")
    """),
    md("""
    Read the table carefully:

    - If the **draft** uses other settings *consistently* (sampled and ratio both at
      T = 1.0), the output is still exact: the draft can be anything, as long as $q$ is the
      distribution its token came from. Only the speed changes.
    - If the **target's** $p$ is computed with the wrong settings, the output is exactly the
      wrong $p$.
    - If the draft token is drawn from one distribution but the ratio uses another (a
      greedy draft with a softmax $q$: an old transformers bug; raw logits while the token
      came from top-k: a newer one), the output is biased.
    """),
    code("""
    sv.figures.standardization_figure(target_logits, draft_logits, intended=want, target_used=sv.Sampling(1.0))
    """),
    md("""
    In the app, set the temperature / top-k / top-p of each ingredient separately (what the
    user intended, the target's $p$ in the ratio, how the draft token was sampled, the $q$ in
    the ratio). The **Fix** button ticks every "same as" box, i.e. standardised sampling,
    and the output snaps back onto the intended distribution.
    """),
    code("""
    sv.standardization_app(target_logits, draft_logits)
    """),
    md("""
    ## 3 · KV-cache precision

    A quantised KV cache (say fp8 while the model runs in bf16) perturbs the target's logits
    a little at every position, so the verifier's $p$ is a slightly different distribution
    $\\tilde p$. Speculative decoding then reproduces $\\tilde p$ exactly, which is the
    correct behaviour with respect to the model *as served*, but not the reference model.
    Below, a small perturbation of the logits plays the part of cache error:
    """),
    code("""
    rng = np.random.default_rng(0)
    logits = rng.normal(size=50)                              # a 50-token target, reference logits
    draft = sv.standardize(logits + rng.normal(scale=1.0, size=50))
    p_ref = sv.standardize(logits)
    for noise in (0.0, 0.01, 0.05, 0.2):
        p_cache = sv.standardize(logits + rng.normal(scale=noise, size=50))   # what the verifier sees
        out = sv.output_dist(p_cache, draft)
        print(f"logit error {noise:<5}: TV(output, served p) = {sv.tv_distance(out, p_cache):.1e}, "
              f"TV(output, reference p) = {sv.tv_distance(out, p_ref):.4f}")
    """),
    md("""
    The first column stays at rounding level: the algorithm is exact with respect to what
    the target computed. The second column is the cache error itself; plain autoregressive
    sampling with the same cache has exactly the same error. The field notes add two
    cache bugs that hurt speed, not the distribution: caches *reset* instead of rolled back
    after a rejection (acceptance falls towards $1/k$), and caches that cannot be cropped.

    ## 4 · Lossy on purpose: lenience and friends

    Some methods relax the rule on purpose to keep more drafts. *Lenience* $l < 1$ accepts
    when $u \\le p/(l\\,q)$, i.e. it pretends the draft offered less than it did. The
    field-notes example $p = (0.7, 0.2, 0.1)$, $q = (0.1, 0.2, 0.7)$ with the residual left
    as $(p - q)^+$:
    """),
    code("""
    pl, ql = (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)
    print(f"{'l':>5}{'output':>26}{'P(keep draft)':>15}{'TV from p':>11}")
    for l in (1.0, 0.8, 0.5, 0.2):
        out = sv.output_dist(pl, ql, rule="lenient", l=l)
        acc = sv.rule_acceptance_rate(pl, ql, rule="lenient", l=l)
        print(f"{l:>5}{str(out.round(4)):>26}{acc:>15.3f}{sv.tv_distance(out, pl):>11.3f}")
    typ = sv.compare_rules(pl, ql, rules=["typical"])[0]
    print(f"\\nMedusa typical acceptance (eps=0.09, delta=0.3): keeps {typ.acceptance:.2f} of drafts, TV {typ.tv:.2f}")
    """),
    md("""
    $l = 1$ is the exact rule. Smaller $l$ keeps more drafts and moves the output towards
    the draft. (Another variant also shrinks the residual to $(p - l\\,q)^+$; the field notes
    report TV 0.060 / 0.167 / 0.438 for it at $l = 0.8 / 0.5 / 0.2$.) Ensemble verification
    against $w\\,p + (1 - w)\\,q$ is lossy in the same sense. These are legitimate
    engineering trade-offs, as long as they are **named** as lossy: RL rollouts in
    particular should not use them silently.
    """),
    code("""
    sv.figures.tradeoff_figure(pl, ql)
    """),
    check_yourself(
        """
        1. Your serving stack runs the target with an fp8 KV cache. Is speculative decoding
           lossless there?
        2. The draft model runs at temperature 1.0 while users ask for 0.7. Is that a bug?
        """,
        """
        1. With respect to the target *as it is served* (fp8 cache), yes, exactly: the
           verifier reproduces the $p$ it computes. With respect to a bf16 reference model,
           no, but plain autoregressive sampling with the same cache has the same error. The
           fair comparison is speculative vs. plain sampling with identical numerics.
        2. Not by itself. The draft may be any distribution, as long as the $q$ in the ratio
           is the distribution its token was actually sampled from (here: T = 1.0) and the
           target's $p$ uses the user's settings (T = 0.7). It only becomes a bug when the
           ratio uses a different $q$ than the sampler, or when $p$ is not the user's
           distribution. A draft at the same temperature is usually *faster*, though.
        """,
    ),
    md("""
    ## Summary

    - The theorem is exact; implementations are "lossless within hardware numerics".
    - Fold every sampling processor into $p$ and $q$ before taking the ratio (standardised
      sampling), and use for $q$ exactly the distribution the draft token was drawn from.
    - KV-cache precision changes the target itself; speculative decoding reproduces the
      changed target exactly.
    - Lenience, typical acceptance and similar relaxations trade exactness for acceptance.

    **Next:** [10 · Recap](10_recap.ipynb).
    """),
]

# --------------------------------------------------------------------------- 10

NB10 = [
    md("""
    # 10 · Recap: the whole argument on one page

    *specviz tutorial, part 10 of 10.*

    **What you will learn**

    Nothing new: this page collects the key facts of notebooks 1 to 9, and re-checks each of
    them by running specviz, on the running example and on random distributions.
    """),
    code(SETUP),
    code(EXACT),
    md("""
    | | |
    |---|---|
    | **Central result** | One speculative step outputs a token distributed exactly as the target $p$: no approximation, no bias. |
    | **Key formulas** | accept with $a(x) = \\min(1, p(x)/q(x))$; on rejection draw from $p'(x) = (p(x) - q(x))^+ / Z$. |
    | **The algebraic core** | $Z = 1 - \\sum_x \\min(p, q) = P(\\text{reject})$, so the normaliser cancels. |
    | **Money equation** | $\\min(p, q) + (p - q)^+ = p$, token by token. |
    | **Picture** | the overlap $\\min(p, q)$ ("both agree") is delivered by accepting; the shortfall $(p - q)^+$ ("target wants more") by the repair. |
    | **Extremes** | $q = p$: never rejects, maximum speed-up. Disjoint $q$: always rejects, no speed-up, still exact. |
    | **Pitfalls** | never repair from $p$ (double counts the overlap); never use $\\lvert p - q\\rvert$ (adds mass where the draft over-proposed). |
    | **Engineering red line** | lossless only if the ratio uses the same standardised distributions that are sampled: fold temperature / top-k / top-p in first; mind dtypes. |
    | **Sources** | Leviathan et al. 2023, Appendix A.1; Chen et al. 2023, Theorem 1: two independent, essentially identical proofs. |
    """),
    md("""
    ## Every claim, re-checked

    On the running example, in exact fractions:
    """),
    code("""
    checks = {
        "a(x) = min(1, p/q)": show(sv.acceptance_prob(P, Q)),
        "accepted mass min(p, q)": show(sv.overlap(P, Q)),
        "P(accept)": sv.acceptance_rate(P, Q),
        "shortfall (p - q)+": show(sv.residual(P, Q)),
        "Z": sv.rejection_mass(P, Q),
        "p'": show(sv.resample_dist(P, Q)),
        "output distribution": show(sv.output_dist(P, Q)),
        "resample-from-p pitfall": show(sv.output_dist(P, Q, rule="resample_target")),
    }
    for k, v in checks.items():
        print(f"{k:<26}{v}")
    assert sv.rejection_mass(P, Q) == 1 - sv.acceptance_rate(P, Q)
    assert list(sv.overlap(P, Q) + sv.residual(P, Q)) == P == list(sv.output_dist(P, Q))
    """),
    md("""
    And on 1,000 random pairs of 20-token distributions (floating point, so "equal" means
    equal up to rounding):
    """),
    code("""
    worst = {"money equation": 0.0, "Z = P(reject)": 0.0, "output = p": 0.0}
    for seed in range(50):
        pair = sv.random_pair(20, seed=seed, concentration=0.5)
        for tp, dq in zip(pair.target[:20], pair.draft[:20]):
            worst["money equation"] = max(worst["money equation"], np.abs(sv.overlap(tp, dq) + sv.residual(tp, dq) - tp).max())
            worst["Z = P(reject)"] = max(worst["Z = P(reject)"], abs(sv.rejection_mass(tp, dq) - 1 + sv.acceptance_rate(tp, dq)))
            worst["output = p"] = max(worst["output = p"], np.abs(sv.output_dist(tp, dq) - tp).max())
    for k, v in worst.items():
        print(f"{k:<16} largest error over 1,000 pairs: {v:.1e}")
    """),
    md("""
    And by simulation, through the audit:
    """),
    code("""
    sv.audit("lossless", p, q, n=200_000, seed=0)
    """),
    check_yourself(
        """
        Explain to a colleague, in two sentences and without formulas, why speculative
        decoding does not change the output distribution.
        """,
        """
        One possible answer: *Whenever the draft proposes a token, we keep it only as often as
        the target itself would have produced it, so the kept tokens account for exactly the
        probability both models agree on. Whatever probability the target wanted beyond
        that is supplied by the replacement draw after a rejection, which is sized to be
        exactly the missing amount, so the two parts add up to the target's distribution.*
        """,
    ),
    md("""
    ## Where to go next

    - The [dashboard](dashboard.ipynb) puts the interactive pieces together
      (`make dashboard` serves it with Voila).
    - The papers: Leviathan et al. 2023 (arXiv:2211.17192), Appendix A.1; Chen et al. 2023
      (arXiv:2302.01318), Theorem 1.
    - Back to the [index](README.md).
    """),
]


NOTEBOOKS = {
    "01_why_lossless_and_notation": NB01,
    "02_importance_sampling": NB02,
    "03_rejection_sampling": NB03,
    "04_the_algorithm_and_theorem": NB04,
    "05_the_proof_in_three_steps": NB05,
    "06_worked_examples": NB06,
    "07_pitfalls": NB07,
    "08_gamma_steps_and_trees": NB08,
    "09_when_lossless_breaks": NB09,
    "10_recap": NB10,
}


def build(stem: str, cells) -> nbformat.NotebookNode:
    """A v4 notebook without outputs, with stable cell ids (so rebuilds give no diff)."""
    nb = new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO})
    for i, (kind, source) in enumerate(cells):
        cell = new_markdown_cell(source) if kind == "markdown" else new_code_cell(source)
        cell["id"] = f"{stem[:2]}-{i:03d}"
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb, version=4) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that the notebooks are up to date")
    ap.add_argument("--out", type=Path, default=NOTEBOOK_DIR, help="output folder (default: notebooks/)")
    args = ap.parse_args(argv)
    stale = []
    for stem, cells in NOTEBOOKS.items():
        path = args.out / f"{stem}.ipynb"
        text = render(build(stem, cells))
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print("out of date (run python scripts/build_notebooks.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
