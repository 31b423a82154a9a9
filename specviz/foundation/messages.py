"""The message catalogue: every piece of UI and figure text of specviz, in English ("en") and Chinese ("zh").

One dict, `MESSAGES`: key -> {"en": text, "zh": text}. Keys are grouped by where they are used
(`lang.*`, `dashboard.*`, `money.*`, `exercise.*`, ...). Text may hold `str.format` fields,
filled by `specviz.foundation.i18n.t(key, **fields)`. A test checks that every key has both languages and
that every `t("...")` in the code names a key that exists.
"""

MESSAGES: dict[str, dict[str, str]] = {
    "lang.name": {"en": "English", "zh": "中文"},
    "lang.toggle": {"en": "Language", "zh": "语言"},
    # shared figure words (specviz.figures.*)
    "figure.p_target": {"en": "p (target)", "zh": "p（目标）"},
    "figure.q_draft": {"en": "q (draft)", "zh": "q（草稿）"},
    "figure.probability": {"en": "probability", "zh": "概率"},
    "figure.token": {"en": "token", "zh": "token"},
    "figure.joint_accept": {"en": "P(x ∧ accept)", "zh": "P(x ∧ 接受)"},
    "figure.joint_reject": {"en": "P(x ∧ reject)", "zh": "P(x ∧ 拒绝)"},
    "figure.lossless_ok": {"en": "lossless ✓", "zh": "无损 ✓"},
    "figure.tv_output_p": {"en": "TV(output, p)", "zh": "TV(输出, p)"},
    "figure.speedup_hover": {
        "en": "γ = %{x}<br>α = %{y}<br>speedup %{z:.2f}×<extra></extra>",
        "zh": "γ = %{x}<br>α = %{y}<br>加速比 %{z:.2f}×<extra></extra>",
    },
    # the money diagram (figures/money.py, widgets/money.py)
    "money.step1": {
        "en": "Step 1 · accept: drafting x ~ q and keeping it with prob. min(1, p/q) emits min(p, q) (blue)",
        "zh": "第 1 步 · 接受：从 q 抽出草稿 x，以概率 min(1, p/q) 保留，产出 min(p, q)（蓝）",
    },
    "money.step2": {
        "en": "Step 2 · reject: the draft's excess (q − p)⁺ (hatched) is thrown away, in total Z = 1 − Σ min(p, q)",
        "zh": "第 2 步 · 拒绝：草稿多出的 (q − p)⁺（斜线）被丢弃，总量 Z = 1 − Σ min(p, q)",
    },
    "money.step3": {
        "en": "Step 3 · resample: Z · p′ = (p − q)⁺ (green) fills the gap — min(p, q) + (p − q)⁺ = p",
        "zh": "第 3 步 · 重采样：Z · p′ = (p − q)⁺（绿）补上缺口——min(p, q) + (p − q)⁺ = p",
    },
    "money.title": {"en": "The money diagram: min(p, q) + (p − q)⁺ = p", "zh": "质量分解图：min(p, q) + (p − q)⁺ = p"},
    "money.legend_overlap": {"en": "min(p, q): accepted", "zh": "min(p, q)：被接受"},
    "money.legend_residual": {"en": "(p − q)⁺: resampled after rejection", "zh": "(p − q)⁺：拒绝后重采样"},
    "money.legend_rejected": {"en": "(q − p)⁺: draft mass rejected", "zh": "(q − p)⁺：被拒绝的草稿质量"},
    "money.p_accept": {"en": "P(accept)", "zh": "P(接受)"},
    "money.p_reject": {"en": "P(reject)", "zh": "P(拒绝)"},
    "money.z_zero": {"en": "Z = 0: rejection never happens, p′ is never used", "zh": "Z = 0：从不拒绝，用不到 p′"},
    "money.never_used": {"en": "never used (Z = 0)", "zh": "用不到（Z = 0）"},
    "money.table_out": {"en": "P(out = x)", "zh": "P(输出 = x)"},
    "money.table_match": {"en": "match", "zh": "一致"},
    "money.table_total": {"en": "total", "zh": "合计"},
    "money.table_lossless": {"en": "output = p: lossless", "zh": "输出 = p：无损"},
    "money.table_lossy": {"en": "output ≠ p: NOT lossless", "zh": "输出 ≠ p：不是无损"},
    "money.table_title": {
        "en": "Rule {rule!r}: P(out = x) = P(x ∧ accept) + P(x ∧ reject) — {verdict}",
        "zh": "规则 {rule!r}：P(输出 = x) = P(x ∧ 接受) + P(x ∧ 拒绝)——{verdict}",
    },
    "money.heading": {
        "en": "Why speculative decoding is lossless: min(p, q) + (p − q)⁺ = p",
        "zh": "投机解码为什么无损：min(p, q) + (p − q)⁺ = p",
    },
    "money.back": {"en": "◀ Back", "zh": "◀ 上一步"},
    "money.next": {"en": "Next ▶", "zh": "下一步 ▶"},
    "money.step_label": {"en": "Step {step} of 3", "zh": "第 {step} 步（共 3 步）"},
    "money.morph": {"en": "morph", "zh": "渐变"},
    "money.play": {"en": "Play: q from p to p's least likely token", "zh": "播放：q 从 p 变到 p 最不可能的 token"},
    "money.play_tooltip": {
        "en": "morph the draft q from q = p to a one-hot on p's least likely token",
        "zh": "把草稿 q 从 q = p 渐变为落在 p 最不可能的 token 上的 one-hot 分布",
    },
    "money.pause": {"en": "Pause", "zh": "暂停"},
    "money.disjoint": {"en": " — disjoint from p", "zh": "——与 p 不相交"},
    # importance and rejection sampling, a(x) (figures/sampling.py)
    "sampling.weights_title": {"en": "importance weights w(x) = p(x)/q(x)", "zh": "重要性权重 w(x) = p(x)/q(x)"},
    "sampling.estimate_title": {"en": "running IS estimate of E_p[{f}]", "zh": "E_p[{f}] 的 IS 累积估计"},
    "sampling.estimate": {"en": "IS estimate (1/n) Σ w(xᵢ) f(xᵢ)", "zh": "IS 估计 (1/n) Σ w(xᵢ) f(xᵢ)"},
    "sampling.no_weights": {"en": "E_q[f] = {value:.3f} (no weights)", "zh": "E_q[f] = {value:.3f}（不加权）"},
    "sampling.n_draft": {"en": "number of draft samples n", "zh": "草稿样本数 n"},
    "sampling.is_note": {
        "en": "{f}. IS gives an unbiased <i>expectation</i>, not samples from p.",
        "zh": "{f}。IS 给出的是无偏的<i>期望</i>，不是来自 p 的样本。",
    },
    "sampling.is_blind": {
        "en": " Warning: q = 0 on target mass {mass:.3f}: IS cannot see it.",
        "zh": "注意：有 {mass:.3f} 的目标质量落在 q = 0 处，IS 看不到它。",
    },
    "sampling.is_title": {
        "en": "Importance sampling: reweight draft samples by p/q",
        "zh": "重要性采样：用 p/q 给草稿样本重新加权",
    },
    "sampling.no_envelope_title": {
        "en": "Rejection sampling needs M·q ≥ p everywhere",
        "zh": "拒绝采样要求处处 M·q ≥ p",
    },
    "sampling.no_envelope": {
        "en": "q(x) = 0 where p(x) > 0: no finite M, acceptance 0 — classic rejection sampling cannot reach p",
        "zh": "在 p(x) > 0 处 q(x) = 0：不存在有限的 M，接受率为 0——经典拒绝采样得不到 p",
    },
    "sampling.envelope": {"en": "envelope M·q (M = {M:.3g})", "zh": "包络 M·q（M = {M:.3g}）"},
    "sampling.kept": {"en": "accepted: min(p, M·q)", "zh": "被接受：min(p, M·q)"},
    "sampling.per_try": {
        "en": "acceptance per try = Σ min(p, M·q) / M = {value:.3f}",
        "zh": "每次尝试的接受率 = Σ min(p, M·q) / M = {value:.3f}",
    },
    "sampling.clipped": {
        "en": " — M < max p/q = {M:.3g}: the output is clipped, not p",
        "zh": "——M < max p/q = {M:.3g}：输出被截断，不是 p",
    },
    "sampling.rejection_title": {"en": "Rejection sampling with envelope M·q", "zh": "以 M·q 为包络的拒绝采样"},
    "sampling.accept_hover": {
        "en": "%{x}: accept with %{y:.4f}<extra></extra>",
        "zh": "%{x}：以 %{y:.4f} 的概率接受<extra></extra>",
    },
    "sampling.clip": {
        "en": "clip at 1: tokens with p ≥ q are always accepted",
        "zh": "在 1 处截断：p ≥ q 的 token 总被接受",
    },
    "sampling.acceptance_title": {
        "en": "Acceptance probability a(x) = min(1, p(x)/q(x))",
        "zh": "接受概率 a(x) = min(1, p(x)/q(x))",
    },
    "sampling.ratio_axis": {"en": "ratio / probability", "zh": "比值 / 概率"},
    # samples against the exact p; the Monte-Carlo app (figures/empirical.py, widgets/monte_carlo.py)
    "empirical.empirical": {"en": "empirical (n = {n:,})", "zh": "经验频率（n = {n:,}）"},
    "empirical.exact_band": {"en": "exact p with {ci:.0%} binomial band", "zh": "精确的 p 及 {ci:.0%} 二项区间"},
    "empirical.outside": {
        "en": "TV(empirical, p) = {tv:.4f}; {k} of {V} tokens outside the {ci:.0%} band",
        "zh": "TV(经验, p) = {tv:.4f}；{V} 个 token 中有 {k} 个落在 {ci:.0%} 区间外",
    },
    "empirical.title": {"en": "Empirical vs exact", "zh": "经验频率与精确值"},
    "empirical.tv": {"en": "{rule}: TV(empirical, p)", "zh": "{rule}：TV(经验, p)"},
    "empirical.floor": {"en": "{rule}: exact TV(output, p) = {tv:.3f}", "zh": "{rule}：精确的 TV(输出, p) = {tv:.3f}"},
    "empirical.noise": {"en": "{c:.3f}/√n (sampling noise)", "zh": "{c:.3f}/√n（采样噪声）"},
    "empirical.convergence_title": {
        "en": "Distance to p shrinks like 1/√n — unless the rule is lossy",
        "zh": "与 p 的距离按 1/√n 缩小——除非规则有损",
    },
    "empirical.samples_n": {"en": "samples n", "zh": "样本数 n"},
    "empirical.tv_axis": {"en": "TV(empirical, p)", "zh": "TV(经验, p)"},
    "empirical.accepted": {"en": "sampled & accepted (→ min(p, q))", "zh": "采样且被接受（→ min(p, q)）"},
    "empirical.resampled": {"en": "sampled after rejection (→ (p − q)⁺)", "zh": "拒绝后重采样（→ (p − q)⁺）"},
    "empirical.exact_overlap": {"en": "exact min(p, q)", "zh": "精确的 min(p, q)"},
    "empirical.mc_summary": {
        "en": "n = {n:,} samples · TV(empirical, p) = {tv:.4f} · acceptance {acc:.3f} (exact {exact:.3f})",
        "zh": "n = {n:,} 个样本 · TV(经验, p) = {tv:.4f} · 接受率 {acc:.3f}（精确值 {exact:.3f}）",
    },
    "empirical.press_run": {"en": "press Run to sample", "zh": "按“运行”开始采样"},
    "empirical.mc_title": {
        "en": "Monte-Carlo check: the histogram converges to p",
        "zh": "蒙特卡洛检验：直方图收敛到 p",
    },
    "empirical.fraction": {"en": "fraction of samples", "zh": "样本占比"},
    "empirical.heading": {"en": "Sampling check: does the output follow p?", "zh": "采样检验：输出服从 p 吗？"},
    "empirical.n_samples": {"en": "N samples", "zh": "样本数 N"},
    "empirical.run": {"en": "Run", "zh": "运行"},
    "empirical.progress": {"en": "progress", "zh": "进度"},
    "empirical.audit": {"en": "audit of these {n:,} samples", "zh": "对这 {n:,} 个样本的审计"},
    "empirical.n_positive": {"en": "N must be >= 1", "zh": "N 必须 ≥ 1"},
    # verification rules and lossy relaxations (figures/pitfalls.py, widgets/pitfalls.py)
    "pitfalls.rule.lossless": {
        "en": "accept min(1, p/q); on rejection sample (p - q)+ / Z",
        "zh": "以 min(1, p/q) 接受；拒绝时从 (p − q)⁺ / Z 采样",
    },
    "pitfalls.rule.resample_target": {
        "en": "pitfall: on rejection sample from p itself",
        "zh": "陷阱：拒绝时直接从 p 采样",
    },
    "pitfalls.rule.abs_residual": {
        "en": "pitfall: on rejection sample |p - q| / sum|p - q|",
        "zh": "陷阱：拒绝时从 |p − q| / Σ|p − q| 采样",
    },
    "pitfalls.rule.lenient": {
        "en": "accept min(1, p/(l q)), resample (p - q)+ / Z; lossy for every l != 1 (l = 1 is the lossless rule)",
        "zh": "以 min(1, p/(l q)) 接受，从 (p − q)⁺ / Z 重采样；l ≠ 1 时都有损（l = 1 即无损规则）",
    },
    "pitfalls.rule.typical": {
        "en": "Medusa: accept iff p(x) > min(eps, delta exp(-H(p))); else sample p",
        "zh": "Medusa：当且仅当 p(x) > min(ε, δ exp(−H(p))) 时接受，否则从 p 采样",
    },
    "pitfalls.rule.token_match": {
        "en": "draw y ~ p; keep the draft iff y == x, else emit y",
        "zh": "抽 y ~ p；y 与草稿 x 相同则保留草稿，否则输出 y",
    },
    "pitfalls.rule.drop_unlikely": {
        "en": "peeking γ: leave the draft out when p(x)/q(x) < t and sample p instead; else verify it",
        "zh": "偷看判决的 γ：当 p(x)/q(x) < t 时不检验该草稿，改从 p 采样；否则照常验证",
    },
    "pitfalls.not_lossless": {
        "en": "NOT lossless ✗ (TV(output, p) = {tv:.4f})",
        "zh": "不是无损 ✗（TV(输出, p) = {tv:.4f}）",
    },
    "pitfalls.rule_sub": {
        "en": "{description} · acceptance {acc:.3f} · {verdict}",
        "zh": "{description} · 接受率 {acc:.3f} · {verdict}",
    },
    "pitfalls.rule_title": {"en": "Rule {rule!r}: output vs target", "zh": "规则 {rule!r}：输出与目标"},
    "pitfalls.rules_title": {
        "en": "Output of each verification rule vs the target p (TV(output, p) in the legend)",
        "zh": "各验证规则的输出与目标 p（图例中为 TV(输出, p)）",
    },
    "pitfalls.output_axis": {"en": "P(output = x)", "zh": "P(输出 = x)"},
    "pitfalls.lenient": {"en": "lenient: accept min(1, p/(l·q))", "zh": "宽松规则：以 min(1, p/(l·q)) 接受"},
    "pitfalls.lenient_hover": {
        "en": "l = %{customdata:.2f}<br>TV %{x:.4f}<br>acceptance %{y:.3f}<extra></extra>",
        "zh": "l = %{customdata:.2f}<br>TV %{x:.4f}<br>接受率 %{y:.3f}<extra></extra>",
    },
    "pitfalls.typical": {
        "en": "typical acceptance (δ = {delta:g}, ε swept)",
        "zh": "典型接受（δ = {delta:g}，ε 取一系列值）",
    },
    "pitfalls.typical_hover": {
        "en": "ε = %{customdata:.3g}<br>TV %{x:.4f}<br>acceptance %{y:.3f}<extra></extra>",
        "zh": "ε = %{customdata:.3g}<br>TV %{x:.4f}<br>接受率 %{y:.3f}<extra></extra>",
    },
    "pitfalls.tradeoff_title": {
        "en": "Trading exactness for acceptance: lossy relaxations move right",
        "zh": "以精确性换接受率：有损的放宽规则向右偏移",
    },
    "pitfalls.tradeoff_x": {
        "en": "TV(output, p): how far the output is from the target",
        "zh": "TV(输出, p)：输出离目标有多远",
    },
    "pitfalls.acceptance_rate": {"en": "acceptance rate", "zh": "接受率"},
    "pitfalls.option_pitfall": {"en": "{rule} (pitfall / lossy)", "zh": "{rule}（陷阱 / 有损）"},
    "pitfalls.lenience": {"en": "lenience l", "zh": "宽松度 l"},
    "pitfalls.audit_n": {"en": "audit N", "zh": "审计样本数"},
    "pitfalls.heading": {
        "en": "Pitfalls: rules that look right but are not lossless",
        "zh": "陷阱：看似正确、实则有损的规则",
    },
    "pitfalls.acceptance": {"en": "acceptance", "zh": "接受率"},
    "pitfalls.output": {"en": "output", "zh": "输出"},
    "pitfalls.target_p": {"en": "target p", "zh": "目标 p"},
    "pitfalls.audit": {"en": "audit ({n:,} samples)", "zh": "审计（{n:,} 个样本）"},
    # mismatched sampling settings (figures/standardization.py, widgets/standardization.py)
    "standardization.greedy": {"en": "greedy", "zh": "贪心"},
    "standardization.q_sampled": {"en": "q sampled ({settings})", "zh": "采样用的 q（{settings}）"},
    "standardization.p_used": {"en": "p in the ratio ({settings})", "zh": "比值里的 p（{settings}）"},
    "standardization.output": {"en": "actual output", "zh": "实际输出"},
    "standardization.intended": {"en": "intended target ({settings})", "zh": "想要的目标（{settings}）"},
    "standardization.tv_bad": {"en": "TV(output, intended) = {tv:.4f} ✗", "zh": "TV(输出, 目标) = {tv:.4f} ✗"},
    "standardization.sub": {
        "en": "draft q in the ratio: {settings} · {verdict}",
        "zh": "比值里的草稿 q：{settings} · {verdict}",
    },
    "standardization.fold": {
        "en": " — verify with the q the draft was sampled from and the p the user asked for",
        "zh": "——验证时用草稿实际采样所用的 q，以及用户设置下的 p",
    },
    "standardization.title": {
        "en": "Standardised sampling: ratio and samples must use the same distributions",
        "zh": "采样设置标准化：比值和采样必须用同一组分布",
    },
    "standardization.row_intended": {"en": "intended sampling", "zh": "想要的采样设置"},
    "standardization.row_target_used": {"en": "p in the ratio made with", "zh": "比值里的 p 所用设置"},
    "standardization.row_draft_sampled": {"en": "draft token sampled with", "zh": "草稿 token 的采样设置"},
    "standardization.row_draft_ratio": {"en": "q in the ratio made with", "zh": "比值里的 q 所用设置"},
    "standardization.name_intended": {"en": "intended", "zh": "想要的设置"},
    "standardization.name_draft_sampled": {"en": "draft sampled", "zh": "草稿采样设置"},
    "standardization.same_as": {"en": "same as {name}", "zh": "同{name}"},
    "standardization.fix": {"en": "Fix: use one standardised distribution", "zh": "修正：统一使用标准化后的分布"},
    "standardization.heading": {
        "en": "Standardised sampling: temperature, top-k and top-p must be folded into p and q before verifying",
        "zh": "采样设置标准化：验证前必须把温度、top-k 和 top-p 折算进 p 和 q",
    },
    "standardization.tv_label": {"en": "TV(output, intended)", "zh": "TV(输出, 目标)"},
    "standardization.lossless": {"en": "lossless", "zh": "无损"},
    "standardization.not_asked": {"en": "not the distribution you asked for", "zh": "不是你想要的分布"},
    # γ, speedup, accepted lengths (figures/gamma_steps.py, widgets/gamma.py)
    "gamma.limit": {"en": "limit 1/(1 − α) = {value:.2f}", "zh": "极限 1/(1 − α) = {value:.2f}"},
    "gamma.tokens_title": {
        "en": "Tokens per verify step vs draft length γ (i.i.d. acceptance α)",
        "zh": "每次验证产出的 token 数与草稿长度 γ（逐个独立以 α 接受）",
    },
    "gamma.gamma_axis": {"en": "γ (drafted tokens per step)", "zh": "γ（每步的草稿 token 数）"},
    "gamma.tokens_axis": {"en": "E[tokens per step]", "zh": "E[每步 token 数]"},
    "gamma.speedup": {"en": "speedup", "zh": "加速比"},
    "gamma.best_for_alpha": {"en": "best γ for this α", "zh": "该 α 下最优的 γ"},
    "gamma.speedup_title": {
        "en": "Speedup over plain decoding, draft/target cost c = {c:g}",
        "zh": "相对普通解码的加速比，草稿/目标成本比 c = {c:g}",
    },
    "gamma.alpha_axis": {"en": "α (acceptance rate)", "zh": "α（接受率）"},
    "gamma.empirical": {"en": "empirical ({n:,} steps)", "zh": "经验（{n:,} 步）"},
    "gamma.exact_law": {"en": "exact α^k (1 − α), α^γ at k = γ", "zh": "精确值 α^k (1 − α)，k = γ 时为 α^γ"},
    "gamma.mean_sub": {
        "en": "mean tokens per step {mean:.3f} (exact {exact:.3f}) for α = {alpha:g}, γ = {gamma}",
        "zh": "α = {alpha:g}、γ = {gamma} 时每步平均 {mean:.3f} 个 token（精确值 {exact:.3f}）",
    },
    "gamma.accepted_title": {"en": "Accepted drafts per verify step", "zh": "每次验证接受的草稿数"},
    "gamma.accepted_axis": {"en": "accepted drafts k", "zh": "接受的草稿数 k"},
    "gamma.fraction_steps": {"en": "fraction of steps", "zh": "步数占比"},
    "gamma.panel_tokens": {"en": "tokens per step vs γ", "zh": "每步 token 数随 γ 的变化"},
    "gamma.panel_speedup": {"en": "speedup, c = {c:g} (★ best γ)", "zh": "加速比，c = {c:g}（★ 最优 γ）"},
    "gamma.panel_accepted": {"en": "accepted per step (γ = {gamma})", "zh": "每步接受数（γ = {gamma}）"},
    "gamma.selected": {"en": "α = {alpha:.2f} (selected)", "zh": "α = {alpha:.2f}（当前）"},
    "gamma.current": {"en": "current γ", "zh": "当前 γ"},
    "gamma.best": {"en": "best γ", "zh": "最优 γ"},
    "gamma.current_cell": {"en": "(γ, α) selected", "zh": "当前的 (γ, α)"},
    "gamma.simulated": {"en": "simulated steps", "zh": "模拟步"},
    "gamma.exact_dist": {"en": "exact distribution", "zh": "精确分布"},
    "gamma.accepted_k": {"en": "accepted k", "zh": "接受数 k"},
    "gamma.tokens_per_step": {"en": "tokens / step", "zh": "token / 步"},
    "gamma.fraction": {"en": "fraction", "zh": "占比"},
    "gamma.title": {
        "en": "γ-step: α = {alpha:.2f}, γ = {gamma}, c = {c:g} → {tokens:.2f} tokens/step, speedup {speedup:.2f}×",
        "zh": "γ 步：α = {alpha:.2f}，γ = {gamma}，c = {c:g} → 每步 {tokens:.2f} 个 token，加速 {speedup:.2f}×",
    },
    "gamma.alpha": {"en": "α (acceptance)", "zh": "α（接受率）"},
    "gamma.gamma": {"en": "γ (drafts)", "zh": "γ（草稿数）"},
    "gamma.cost": {"en": "c (cost ratio)", "zh": "c（成本比）"},
    "gamma.n_steps": {"en": "simulated steps", "zh": "模拟步数"},
    "gamma.heading": {
        "en": "γ-step decoding: how many tokens per target call?",
        "zh": "γ 步解码：每次调用目标模型产出几个 token？",
    },
    "gamma.expected": {"en": "E[tokens per verify step]", "zh": "E[每次验证的 token 数]"},
    "gamma.simulated_mean": {"en": "simulated mean", "zh": "模拟均值"},
    "gamma.speedup_row": {"en": "speedup (γ c + 1 cost)", "zh": "加速比（成本计为 γ c + 1）"},
    "gamma.best_row": {"en": "best γ for this α, c", "zh": "该 α、c 下最优的 γ"},
    # multi-draft verification (figures/multidraft.py, widgets/multidraft.py)
    "multidraft.panel_accept": {"en": "P(some draft accepted)", "zh": "P(有草稿被接受)"},
    "multidraft.panel_output": {"en": "output with k = {k} drafts", "zh": "k = {k} 个草稿时的输出"},
    "multidraft.update": {
        "en": "update of R: R ← (R − q)⁺/Z (lossless)",
        "zh": "更新 R：R ← (R − q)⁺/Z（无损）",
    },
    "multidraft.naive": {"en": "naive: always compare with p", "zh": "朴素做法：始终与 p 比较"},
    "multidraft.output_update": {"en": "output (update)", "zh": "输出（更新 R）"},
    "multidraft.output_naive": {"en": "output (naive)", "zh": "输出（朴素）"},
    "multidraft.n_drafts": {"en": "number of drafts", "zh": "草稿数"},
    "multidraft.title": {
        "en": "Multi-draft (SpecInfer-style) verification: more drafts, more acceptance — "
        "lossless only when R is updated",
        "zh": "多草稿（SpecInfer 式）验证：草稿越多、接受越多——只有更新 R 才无损",
    },
    "multidraft.k_max": {"en": "drafts k ≤", "zh": "草稿数 k ≤"},
    "multidraft.heading": {"en": "Multi-draft / tree verification", "zh": "多草稿 / 树形验证"},
    "multidraft.acc_update": {"en": "acceptance (update)", "zh": "接受率（更新残差）"},
    "multidraft.acc_naive": {"en": "acceptance (naive)", "zh": "接受率（朴素）"},
    "multidraft.tv_naive": {"en": "TV naive", "zh": "TV（朴素）"},
    # floating point (figures/numerics.py, widgets/numerics.py)
    "numerics.panel_distance": {"en": "distance from the fp64 target p", "zh": "与 fp64 目标 p 的距离"},
    "numerics.panel_error": {"en": "|output(x) − p(x)| per token", "zh": "每个 token 的 |输出(x) − p(x)|"},
    "numerics.p_tv": {
        "en": "TV(p in dtype, p): the target itself drifts",
        "zh": "TV(该 dtype 下的 p, p)：目标本身的漂移",
    },
    "numerics.verify_tv": {
        "en": "TV(output, p in dtype): verification arithmetic",
        "zh": "TV(输出, 该 dtype 下的 p)：验证运算的误差",
    },
    "numerics.out_tv": {"en": "TV(output, p): what you get", "zh": "TV(输出, p)：实际得到的偏差"},
    "numerics.abs_err": {"en": "{dtype}: max {max:.1e}", "zh": "{dtype}：最大 {max:.1e}"},
    "numerics.underflow": {"en": ", {n} underflow(s)", "zh": "，{n} 个下溢"},
    "numerics.dtype": {"en": "dtype", "zh": "数据类型（dtype）"},
    "numerics.rank": {"en": "token rank (by p)", "zh": "token 排名（按 p）"},
    "numerics.title": {
        "en": "Lossless within hardware numerics: one exact step in each dtype (V = {V}, T = {T:g})",
        "zh": "在硬件数值精度内无损：每种 dtype 下精确计算一步（V = {V}，T = {T:g}）",
    },
    "numerics.logit_scale": {"en": "logit scale", "zh": "logit 缩放"},
    "numerics.noise": {"en": "draft noise", "zh": "草稿噪声"},
    "numerics.temperature": {"en": "temperature", "zh": "温度"},
    "numerics.same_as_target": {"en": "same as target", "zh": "与目标相同"},
    "numerics.draft_dtype": {"en": "draft dtype", "zh": "草稿 dtype"},
    "numerics.heading": {
        "en": "Floating point: lossless within hardware numerics",
        "zh": "浮点数：在硬件数值精度内无损",
    },
    "numerics.col_p_tv": {"en": "TV(p_dtype, p)", "zh": "TV(p_dtype, p)"},
    "numerics.col_verify_tv": {"en": "TV(out, p_dtype)", "zh": "TV(输出, p_dtype)"},
    "numerics.col_out_tv": {"en": "TV(out, p)", "zh": "TV(输出, p)"},
    "numerics.col_max": {"en": "max |out − p|", "zh": "max |输出 − p|"},
    "numerics.col_underflow": {"en": "underflowed tokens", "zh": "下溢的 token 数"},
    # the distribution editor (widgets/editor*.py, presets)
    "editor.rescale": {"en": "rescale others", "zh": "其余按比例调整"},
    "editor.free": {"en": "free + normalise", "zh": "自由调节 + 归一化"},
    "editor.sliders": {"en": "sliders", "zh": "滑块"},
    "editor.rescale_tip": {
        "en": "moving one slider rescales the others: always a distribution",
        "zh": "移动一个滑块，其余按比例缩放：始终是一个分布",
    },
    "editor.free_tip": {
        "en": "sliders move independently; press Normalise",
        "zh": "滑块各自移动；之后按“归一化”",
    },
    "editor.vocabulary": {"en": "vocabulary", "zh": "词表大小"},
    "editor.preset.tutorial": {"en": "Tutorial example", "zh": "教程示例"},
    "editor.preset.perfect": {"en": "Perfect draft q = p", "zh": "完美草稿 q = p"},
    "editor.preset.disjoint": {"en": "Disjoint support", "zh": "支撑集不相交"},
    "editor.preset.uniform": {"en": "Uniform draft", "zh": "均匀草稿"},
    "editor.preset.one_hot": {"en": "Near one-hot", "zh": "接近 one-hot"},
    "editor.type": {"en": "type {which}", "zh": "输入 {which}"},
    "editor.example": {"en": "e.g. {example}", "zh": "例如 {example}"},
    "editor.normalise": {"en": "Normalise", "zh": "归一化"},
    "editor.normalise_tip": {"en": "rescale p and q to sum to 1", "zh": "把 p 和 q 缩放到和为 1"},
    "editor.apply": {"en": "Apply", "zh": "应用"},
    "editor.presets": {"en": "presets:", "zh": "预设："},
    "editor.target_p": {"en": "target p", "zh": "目标 p"},
    "editor.draft_q": {"en": "draft q", "zh": "草稿 q"},
    "editor.hint": {
        "en": "(switch the sliders to 'rescale others' or press Normalise)",
        "zh": "（把滑块切换到“其余按比例调整”，或按“归一化”）",
    },
    "editor.type_first": {
        "en": "type p and/or q first, e.g. 0.6, 0.3, 0.1",
        "zh": "请先输入 p 和/或 q，例如 0.6, 0.3, 0.1",
    },
    "editor.typed_size": {
        "en": "typed {which} has {n} values but the vocabulary has {V}: type {other} too",
        "zh": "输入的 {which} 有 {n} 个值，但词表有 {V} 个 token：请同时输入 {other}",
    },
    "editor.size_mismatch": {
        "en": "p and q have different lengths ({np} vs {nq}): target and draft must share one vocabulary",
        "zh": "p 和 q 长度不同（{np} 对 {nq}）：目标和草稿必须共用一个词表",
    },
    "editor.vocab_range": {
        "en": "vocabulary size {V} is outside {lo}..{hi}",
        "zh": "词表大小 {V} 不在 {lo}..{hi} 之内",
    },
    "editor.stay_free": {
        "en": " — set some weight first; staying in free mode",
        "zh": "——请先设置一些权重；仍保持自由调节模式",
    },
    "editor.no_numbers": {
        "en": "{name}: type numbers separated by commas, e.g. 0.6, 0.3, 0.1",
        "zh": "{name}：请输入用逗号分隔的数，例如 0.6, 0.3, 0.1",
    },
    "editor.not_numbers": {
        "en": "{name}: {text!r} is not a list of numbers (e.g. 0.6, 0.3, 0.1)",
        "zh": "{name}：{text!r} 不是一串数（例如 0.6, 0.3, 0.1）",
    },
    # shared app text (widgets/base.py, snapshot.py, rule drop-downs)
    "app.pass": {"en": "PASS", "zh": "通过"},
    "app.fail": {"en": "FAIL", "zh": "未通过"},
    "app.figure": {"en": "figure", "zh": "图"},
    "app.rule": {"en": "rule", "zh": "规则"},
    "app.seed": {"en": "seed", "zh": "随机种子"},
    "app.rule_lossless": {"en": "{rule} (lossless)", "zh": "{rule}（无损）"},
    "app.rule_lossy": {"en": "{rule} (lossy)", "zh": "{rule}（有损）"},
    "app.verdict_line": {"en": "{what}: {why}", "zh": "{what}：{why}"},
    "app.audit_ok": {
        "en": "consistent with p (chi-square p-value {pval:.3g} >= {sig:g}, TV {tv:.4f} over {n} samples)",
        "zh": "与 p 一致（卡方检验 p 值 {pval:.3g} ≥ {sig:g}，{n} 个样本的 TV 为 {tv:.4f}）",
    },
    "app.audit_gap": {
        "en": "output differs from p (chi-square p-value {pval:.2g} < {sig:g}, TV {tv:.4f}); "
        "largest gap at token {worst}: {emp:.4f} vs p = {p:.4f}",
        "zh": "输出与 p 不同（卡方检验 p 值 {pval:.2g} < {sig:g}，TV {tv:.4f}）；"
        "差距最大的是 token {worst}：{emp:.4f}，而 p = {p:.4f}",
    },
    "app.audit_impossible": {
        "en": "token {x} was emitted although p({x}) = 0: the output cannot be the target distribution",
        "zh": "token {x} 被输出了，但 p({x}) = 0：输出不可能是目标分布",
    },
    "app.audit_outside": {
        "en": "the verifier emits token ids outside the vocabulary 0..{last}",
        "zh": "验证器输出了词表 0..{last} 之外的 token id",
    },
    # the dashboard (widgets/dashboard.py)
    "dashboard.heading": {"en": "specviz — why speculative decoding is lossless", "zh": "specviz——投机解码为什么无损"},
    "dashboard.intro": {
        "en": "A cheap draft model proposes a token from q; the target model keeps it with probability "
        "min(1, p/q) and otherwise resamples from the normalised residual (p − q)⁺. Each tab shows, and checks "
        "by running, that the tokens that come out follow the target p exactly; a tab is built the first time "
        "you open it. The step-by-step explanation is in the tutorial notebooks (specviz lab).",
        "zh": "便宜的草稿模型从 q 中提出一个 token；目标模型以概率 min(1, p/q) 保留它，否则从归一化的残差 "
        "(p − q)⁺ 中重新采样。每个标签页都既展示、又实际运行检验：产出的 token 严格服从目标分布 p。"
        "标签页在第一次打开时才构建。逐步讲解见教程笔记本（specviz lab）。",
    },
    "dashboard.language_tip": {
        "en": "Switch the language of the dashboard; the tabs are rebuilt in it",
        "zh": "切换仪表盘的语言；各标签页会以新语言重建",
    },
    "dashboard.loading": {"en": "loading…", "zh": "加载中…"},
    "dashboard.build_failed": {"en": "could not build this tab: {error}", "zh": "无法构建这个标签页：{error}"},
    "dashboard.money": {"en": "Money diagram", "zh": "质量分解图"},
    "dashboard.money_text": {
        "en": "Drag p and q: the blue overlap min(p, q) (✓) plus the green residual (p − q)⁺ (↻) always fills the "
        "vermillion outline p — that is the whole proof; use Next/Back to walk through it in three steps.",
        "zh": "拖动 p 和 q：蓝色的重叠 min(p, q)（✓）加上绿色的残差 (p − q)⁺（↻）总能填满朱红色轮廓 p——这就是全部证明；"
        "用“下一步 / 上一步”分三步走一遍。",
    },
    "dashboard.sampling": {"en": "Sampling check", "zh": "采样检验"},
    "dashboard.sampling_text": {
        "en": "Run the sampler many times: the histogram converges to p, its accepted part to min(p, q) and its "
        "resampled part to (p − q)⁺, and a chi-square audit gives the verdict.",
        "zh": "把采样器跑很多次：直方图收敛到 p，其中被接受的部分收敛到 min(p, q)，重采样的部分收敛到 "
        "(p − q)⁺，最后由卡方审计给出结论。",
    },
    "dashboard.pitfalls": {"en": "Pitfalls", "zh": "常见陷阱"},
    "dashboard.pitfalls_text": {
        "en": "Rules that look plausible — resampling from p, from |p − q|, lenient or typical acceptance — "
        "miss the vermillion outline, and the audit catches them.",
        "zh": "看似合理的规则——拒绝后从 p 或 |p − q| 采样、宽松接受、典型接受——都填不满朱红色轮廓，审计会把它们揪出来。",
    },
    "dashboard.gamma": {"en": "γ-steps & trees", "zh": "γ 步与树"},
    "dashboard.gamma_text": {
        "en": "Drafting γ tokens per target call multiplies throughput, and verifying several drafts stays lossless "
        "only if the residual is updated after each rejection.",
        "zh": "每次调用目标模型前先起草 γ 个 token，吞吐量成倍提高；验证多个草稿时，只有每次拒绝后都更新残差才保持无损。",
    },
    "dashboard.numerics": {"en": "Numerics", "zh": "数值精度"},
    "dashboard.numerics_text": {
        "en": "The proof assumes exact arithmetic and one standardised distribution: low precision and "
        "mismatched temperature / top-k move the output away from p.",
        "zh": "证明假设运算精确、且只用一个标准化后的分布：低精度和不一致的温度 / top-k 都会让输出偏离 p。",
    },
    "dashboard.real_models": {"en": "Real models", "zh": "真实模型"},
    "dashboard.real_models_text": {
        "en": "A small target and a smaller draft language model generate text with speculative decoding: "
        "pick the bundled pair, a fetched catalogue model with prompt lookup, or your own models, and γ as a "
        "number or auto. Every token is coloured by its fate (accepted, resampled, bonus, plain target draw), "
        "and any token opens its real p and q as a money diagram.",
        "zh": "一个小的目标语言模型和一个更小的草稿模型用投机解码生成文本：可以选内置模型对、已下载的目录模型"
        "（配合提示词查找）或你自己的模型，γ 可以设为固定值或自动。每个 token 按其结局（接受、重采样、额外 token、"
        "直接从目标模型抽取）着色，点开任一 token 即可把它真实的 p 和 q 画成质量分解图。",
    },
    "dashboard.real_models_missing": {
        "en": "The real-model view is not available in this installation ({error}). The other tabs do not need it.",
        "zh": "当前安装中没有真实模型视图（{error}）。其他标签页不需要它。",
    },
    # exercises (specviz.exercises)
    "exercise.correct": {"en": "Correct.", "zh": "正确。"},
    "exercise.wrong": {"en": "Not yet: {detail}", "zh": "还不对：{detail}"},
    "exercise.unanswered": {
        "en": "Exercise {id}: put your answer in place of None and run the cell again.",
        "zh": "练习 {id}：把 None 换成你的答案，再运行这个单元格。",
    },
    "exercise.number_off": {
        "en": "{got} is not the value asked for (tolerance {tol}).",
        "zh": "{got} 不是所求的值（容差 {tol}）。",
    },
    "exercise.not_number": {"en": "expected one real number, got {got}.", "zh": "需要一个实数，得到的是 {got}。"},
    "exercise.not_callable": {"en": "expected a function, got {got}.", "zh": "需要一个函数，得到的是 {got}。"},
    "exercise.case_failed": {
        "en": "for p = {p}, q = {q} it returned {got}, expected {want}.",
        "zh": "当 p = {p}、q = {q} 时返回了 {got}，应为 {want}。",
    },
    "exercise.case_not_real": {
        "en": "for p = {p}, q = {q} it returned {got}, which is not an array of real numbers; expected {want}.",
        "zh": "当 p = {p}、q = {q} 时返回了 {got}，这不是由实数组成的数组；应为 {want}。",
    },
    "exercise.case_shape": {
        "en": "for p = {p}, q = {q} it returned an array of shape {got_shape}, {got}; expected shape {want_shape}.",
        "zh": "当 p = {p}、q = {q} 时返回了形状为 {got_shape} 的数组 {got}；应为形状 {want_shape}。",
    },
    "exercise.case_timeout": {
        "en": "for p = {p}, q = {q} it took longer than {limit:g} s and was stopped (an endless loop? a sleep?).",
        "zh": "当 p = {p}、q = {q} 时运行超过 {limit:g} 秒，已被中止（是不是死循环，或者在等待？）。",
    },
    "exercise.case_raised": {
        "en": "for p = {p}, q = {q} it raised {error}.",
        "zh": "当 p = {p}、q = {q} 时抛出了 {error}。",
    },
    "exercise.audit_failed": {
        "en": "the audit rejects it for p = {p}, q = {q}: {why}",
        "zh": "在 p = {p}、q = {q} 上审计未通过：{why}",
    },
    "exercise.verifier_no_drafts": {
        "en": "your verifier returns only its outputs. Return (drafts, out): the n drafts it drew from q and the n "
        "tokens it outputs, so that the check sees what your rule does with each draft (a rule that ignores the "
        "draft and samples p also outputs p).",
        "zh": "你的验证器只返回了输出。请返回 (drafts, out)：从 q 抽出的 n 个草稿和输出的 n 个 token，"
        "这样检查才能看到你的规则如何处理每个草稿（一个无视草稿、直接从 p 抽样的规则，输出也服从 p）。",
    },
    "exercise.verifier_inefficient": {
        "en": "for p = {p}, q = {q} your rule keeps the draft only {kept} of the time; the optimum, min(p, q) "
        "summed, is {optimum}: it throws away what the draft proposed (z = {z}; below −{limit} is refused, a "
        "false-alarm rate of 1e-6).",
        "zh": "当 p = {p}、q = {q} 时，你的规则只在 {kept} 的比例上保留了草稿；最优值 Σ min(p, q) 是 {optimum}："
        "它丢掉了草稿提出的东西（z = {z}；低于 −{limit} 即判为不通过，误报率 1e-6）。",
    },
    "exercise.answer_timeout": {
        "en": "reading your answer took longer than {limit:g} s and was stopped (does its __float__ or __repr__ loop?).",
        "zh": "读取你的答案超过 {limit:g} 秒，已被中止（它的 __float__ 或 __repr__ 是不是死循环？）。",
    },
    "exercise.answer_raised": {"en": "reading your answer raised {error}.", "zh": "读取你的答案时抛出了 {error}。"},
    "exercise.changed": {
        "en": "your code changed {names}, which the check itself uses: they are put back, and this check does not "
        "count. Leave them as they are.",
        "zh": "你的代码修改了 {names}，而检查本身要用到它们：已恢复原样，这次检查不算数。请不要修改它们。",
    },
    "exercise.died": {
        "en": "the separate process that ran your code ended without an answer (exit code {code}): does it call "
        "os._exit, or run out of memory?",
        "zh": "运行你的代码的单独进程没有给出结果就结束了（退出码 {code}）：它是否调用了 os._exit，或者内存耗尽？",
    },
    "exercise.ran_process": {
        "en": "It ran in a separate process, which was ended.",
        "zh": "它在单独的进程中运行，该进程已被结束。",
    },
    "exercise.ran_inline": {
        "en": 'It ran in this kernel (exercises.budget.MODE = "inline").',
        "zh": '它在当前内核中运行（exercises.budget.MODE = "inline"）。',
    },
    "exercise.ran_alarm": {
        "en": "It ran in this kernel, stopped by an alarm.",
        "zh": "它在当前内核中运行，由定时信号中止。",
    },
    "exercise.ran_thread": {
        "en": "It ran in a worker thread of this kernel, where it may still be running.",
        "zh": "它在当前内核的一个工作线程中运行，可能仍在那里运行。",
    },
    "exercise.no_more_hints": {
        "en": "No more hints: see solution('{id}').",
        "zh": "没有更多提示了：见 solution('{id}')。",
    },
    "exercise.hint": {"en": "Hint {k} of {n}", "zh": "提示 {k}/{n}"},
    "exercise.solution": {"en": "Solution to exercise {id}", "zh": "练习 {id} 的参考答案"},
    # predict, then reveal (specviz.widgets.prediction)
    "predict.heading": {"en": "Predict first:", "zh": "先预测："},
    "predict.placeholder": {"en": "your guess, e.g. 0.5 or 1/2", "zh": "你的猜测，例如 0.5 或 1/2"},
    "predict.submit": {"en": "Reveal", "zh": "揭晓"},
    "predict.result": {
        "en": "Your guess: {guess} · computed: {answer} · off by {off} ({verdict})",
        "zh": "你的猜测：{guess} · 计算值：{answer} · 相差 {off}（{verdict}）",
    },
    "predict.close": {"en": "within ±{tol}: well predicted", "zh": "在 ±{tol} 以内：预测得不错"},
    "predict.far": {"en": "more than ±{tol} away", "zh": "差距超过 ±{tol}"},
    "predict.not_a_number": {
        "en": "{text} is not a number: type e.g. 0.5, 1/2 or 50%.",
        "zh": "{text} 不是一个数：请输入例如 0.5、1/2 或 50%。",
    },
    "predict.empty": {
        "en": "Type a number first (e.g. 0.5, 1/2 or 50%), then reveal.",
        "zh": "请先输入一个数（例如 0.5、1/2 或 50%），再揭晓。",
    },
    "predict.too_long": {
        "en": "{text} is too long for a number: type at most {n} characters, e.g. 0.5, 1/2 or 50%.",
        "zh": "{text} 太长，不像一个数：最多输入 {n} 个字符，例如 0.5、1/2 或 50%。",
    },
    "predict.too_large": {
        "en": "{text} is too large to compare: type a number between -1e300 and 1e300.",
        "zh": "{text} 太大，无法比较：请输入 -1e300 到 1e300 之间的数。",
    },
    "predict.ambiguous_comma": {
        "en": "{text} is ambiguous: a comma can group thousands or mark decimals. Type {thousands} or {decimal}.",
        "zh": "{text} 有歧义：逗号既可以分隔千位，也可以当小数点。请输入 {thousands} 或 {decimal}。",
    },
    "predict.reveal": {"en": "Guess first, then open: the computed value", "zh": "先猜，再展开：计算值"},
    "predict.static_answer": {"en": "Computed: {answer}", "zh": "计算值：{answer}"},
    # optimality of the speculative rule (specviz.figures.coupling)
    "coupling.title": {
        "en": "No lossless verifier keeps the draft more often than Σ min(p, q)"
        "<br>P(output = draft) of random couplings of q and p, of token matching and of the speculative rule",
        "zh": "任何无损验证器保留草稿的概率都不超过 Σ min(p, q)<br>随机耦合、token 匹配与投机规则的 P(输出 = 草稿)",
    },
    "coupling.random": {"en": "{n} random couplings", "zh": "{n} 个随机耦合"},
    "coupling.independent": {"en": "token matching: {value:.2f}", "zh": "token 匹配：{value:.2f}"},
    "coupling.maximal": {"en": "speculative rule: {value:.2f}", "zh": "投机规则：{value:.2f}"},
    "coupling.bound": {
        "en": "bound Σ min(p, q) = 1 − TV = {value:.2f}",
        "zh": "上界 Σ min(p, q) = 1 − TV = {value:.2f}",
    },
    "coupling.xaxis": {"en": "random couplings, sorted by P(output = draft)", "zh": "随机耦合，按 P(输出 = 草稿) 排序"},
    "coupling.yaxis": {"en": "P(output = draft)", "zh": "P(输出 = 草稿)"},
    # draft trees (specviz.figures.draft_tree, specviz.widgets.draft_tree)
    "tree.title": {"en": "Draft tree: {k} drafts per node, {d} levels", "zh": "草稿树：每个节点 {k} 个草稿，共 {d} 层"},
    "tree.subtitle": {
        "en": "label: outcome, token, P(accepted | parent reached) · P(some child accepted) = {beta:.3f} · "
        "expected tokens per step {e:.3f} · this draw emits {n}: {emitted}",
        "zh": "标签：结果、token、P(被接受 | 父节点已到达) · P(某个子节点被接受) = {beta:.3f} · "
        "每步期望 token 数 {e:.3f} · 这次抽样输出 {n} 个：{emitted}",
    },
    "tree.root": {"en": "prefix", "zh": "前缀"},
    "tree.level": {"en": "level {i}", "zh": "第 {i} 层"},
    "tree.final": {"en": "final token", "zh": "最后的 token"},
    "tree.edges": {"en": "drafted branch", "zh": "草稿分支"},
    "tree.path": {"en": "accepted path", "zh": "接受路径"},
    "tree.step_ends": {"en": "the step ends with", "zh": "本步以此结束"},
    "tree.accepted": {"en": "accepted", "zh": "接受"},
    "tree.rejected": {"en": "rejected", "zh": "拒绝"},
    "tree.untested": {"en": "not tested", "zh": "未检验"},
    "tree.resampled": {"en": "resampled", "zh": "重采样"},
    "tree.bonus": {"en": "bonus", "zh": "额外 token"},
    "tree.from_residual": {"en": "the last residual R", "zh": "最后的残差 R"},
    "tree.from_p": {"en": "the target p", "zh": "目标分布 p"},
    "tree.hover": {
        "en": "{token}: tested {rank} of {k} under its parent<br>P(accepted | parent reached) = {given:.3f}"
        "<br>P(on the accepted path) = {path:.3f}<br>this draw: {status}",
        "zh": "{token}：在父节点下第 {rank} 个（共 {k} 个）接受检验<br>P(被接受 | 父节点已到达) = {given:.3f}"
        "<br>P(在接受路径上) = {path:.3f}<br>这次抽样：{status}",
    },
    "tree.hover_final": {"en": "{kind} token {token}, drawn from {source}", "zh": "{kind} token {token}，抽自{source}"},
    "tree.app_title": {
        "en": "Draft tree: several drafts per position, verified level by level",
        "zh": "草稿树：每个位置多个草稿，逐层验证",
    },
    "tree.k": {"en": "drafts per node k", "zh": "每节点草稿数 k"},
    "tree.depth": {"en": "depth (levels)", "zh": "深度（层数）"},
    "tree.seed": {"en": "seed", "zh": "随机种子"},
    "tree.preset": {"en": "p, q preset", "zh": "p、q 预设"},
    "tree.preset.tutorial": {"en": "running example (cat, dog, fish)", "zh": "贯穿全文的例子（cat、dog、fish）"},
    "tree.preset.far": {"en": "far draft (4 tokens)", "zh": "相差较远的草稿（4 个 token）"},
    "tree.preset.distinct": {
        "en": "distinct children: q's top k, deterministic rule (EAGLE-2, a prompt-lookup trie)",
        "zh": "互不相同的子节点：q 的前 k 个 token，确定性规则（EAGLE-2、提示词查找的候选树）",
    },
    "tree.rule": {"en": "children and rule", "zh": "子节点与规则"},
    "tree.rule.multi_draft": {
        "en": "i.i.d. from q, min(1, R/q) (SpecInfer)",
        "zh": "从 q 独立同分布抽取，min(1, R/q)（SpecInfer）",
    },
    "tree.rule.deterministic": {
        "en": "q's top k, distinct, accept with R(x)",
        "zh": "q 的前 k 个、互不相同，以 R(x) 接受",
    },
    "tree.preset.perfect": {"en": "perfect draft q = p", "zh": "完美草稿 q = p"},
    "tree.p": {"en": "p (target)", "zh": "p（目标）"},
    "tree.q": {"en": "q (draft)", "zh": "q（草稿）"},
    "tree.col.k": {"en": "drafts per node k", "zh": "每节点草稿数 k"},
    "tree.col.beta": {"en": "P(some child accepted)", "zh": "P(某个子节点被接受)"},
    "tree.col.tokens": {"en": "E[tokens per step]", "zh": "每步期望 token 数"},
    "tree.col.nodes": {"en": "drafted nodes", "zh": "草稿节点数"},
    "tree.too_many": {
        "en": "k^depth = {leaves} leaves are too many to draw (at most {most}): lower k or the depth",
        "zh": "k^depth = {leaves} 个叶子太多，画不下（最多 {most} 个）：请减小 k 或深度",
    },
    # one real verify step's draft tree (specviz.figures.real_tree)
    "realtree.title": {
        "en": "Verify step {step}: a draft tree of {n} nodes (shape {shape}), {accepted} accepted",
        "zh": "第 {step} 个验证步：{n} 个节点的草稿树（形状 {shape}），接受了 {accepted} 个",
    },
    "realtree.sub_resampled": {
        "en": "the walk stopped at {where}, its children rejected ({rejected} tested): the final token “{token}” "
        "was drawn from the residual R",
        "zh": "验证在{where}停止，子节点都被拒绝（检验了 {rejected} 个）：最后的 token“{token}”从残差 R 中抽出",
    },
    "realtree.sub_bonus": {
        "en": "every level accepted, down to the leaf {where}: the bonus token “{token}” came from the target p",
        "zh": "每一层都被接受，一直到叶子{where}：额外 token“{token}”来自目标分布 p",
    },
    "realtree.at_root": {"en": "the prefix (no draft accepted)", "zh": "前缀处（没有草稿被接受）"},
    "realtree.at_node": {"en": "node {node} “{token}” (depth {depth})", "zh": "节点 {node}“{token}”（深度 {depth}）"},
    "realtree.alpha": {"en": "Σ min(p, q) = {alpha:.3f} there", "zh": "该处 Σ min(p, q) = {alpha:.3f}"},
    "realtree.top_only": {
        "en": "bars: the top tokens only (each sums to ≤ 1)",
        "zh": "柱形只含概率最高的 token（各组之和 ≤ 1）",
    },
    "realtree.tree_title": {
        "en": "The tree: ✓ accepted, ✗ rejected, ○ never tested",
        "zh": "草稿树：✓ 接受，✗ 拒绝，○ 未检验",
    },
    "realtree.bars_title": {
        "en": "At the stop node: p, q, min(p, q),<br>and R (or p after a leaf)",
        "zh": "停止节点处：p、q、min(p, q)<br>和 R（叶节点之后为 p）",
    },
    "realtree.stop": {"en": "the walk stopped here", "zh": "验证在此停止"},
    "realtree.hover": {
        "en": "{status}: “{token}” (node {node}, depth {depth})<br>after its parent: p = {p:.4f}, q = {q:.4f}",
        "zh": "{status}：“{token}”（节点 {node}，深度 {depth}）<br>在父节点之后：p = {p:.4f}，q = {q:.4f}",
    },
    "realtree.drawn": {"en": "drawn “{token}”", "zh": "抽出“{token}”"},
    # the real-model live view (the package specviz.widgets.live, specviz.lm.stats.fates, specviz.lm.gamma.payoff)
    "live.heading": {
        "en": "Speculative decoding on real models: every token's fate, live",
        "zh": "真实模型上的投机解码：实时看每个 token 的结局",
    },
    "live.fate_accepted": {"en": "accepted draft", "zh": "被接受的草稿"},
    "live.fate_resampled": {"en": "resampled after a rejection", "zh": "拒绝后重采样"},
    "live.fate_bonus": {"en": "bonus token (all γ drafts accepted)", "zh": "额外 token（γ 个草稿全部被接受）"},
    "live.fate_target": {"en": "plain target draw", "zh": "直接从目标模型抽取"},
    "live.legend_prompt": {"en": "· grey: the prompt", "zh": "· 灰色：提示词"},
    "live.target": {"en": "target", "zh": "目标模型"},
    "live.draft": {"en": "draft", "zh": "草稿模型"},
    "live.model_box": {
        "en": "bundled, a folder, a .gguf file or a hub id",
        "zh": "bundled（内置模型对）、文件夹、.gguf 文件或模型仓库 id",
    },
    "live.device": {"en": "device", "zh": "设备"},
    "live.device_auto": {"en": "auto", "zh": "自动"},
    "live.load": {"en": "Load pair", "zh": "加载模型对"},
    "live.load_tip": {
        "en": "load the target and draft models named on the left",
        "zh": "加载左边填写的目标模型和草稿模型",
    },
    "live.no_pair_loaded": {"en": "no pair loaded", "zh": "尚未加载模型对"},
    "live.prompt": {"en": "prompt", "zh": "提示词"},
    "live.gamma": {"en": "γ (drafts/step)", "zh": "γ（每步草稿数）"},
    "live.temperature": {"en": "temperature", "zh": "温度"},
    "live.top_k": {"en": "top-k (0 = off)", "zh": "top-k（0 = 关闭）"},
    "live.top_p": {"en": "top-p (1 = off)", "zh": "top-p（1 = 关闭）"},
    "live.max_new_tokens": {"en": "max new tokens", "zh": "最多新 token 数"},
    "live.seed": {"en": "seed", "zh": "随机种子"},
    "live.ar_checkbox": {"en": "autoregressive baseline after each run", "zh": "每次运行后再跑一次自回归基线"},
    "live.generate": {"en": "Generate", "zh": "生成"},
    "live.stop": {"en": "Stop", "zh": "停止"},
    "live.stop_tip": {"en": "stop after the current verify step", "zh": "在当前验证步结束后停止"},
    "live.baseline": {"en": "AR baseline", "zh": "自回归基线"},
    "live.baseline_tip": {
        "en": "plain autoregressive sampling from the target, same settings",
        "zh": "用相同设置直接从目标模型逐个 token 采样",
    },
    "live.sweep": {"en": "γ sweep", "zh": "γ 扫描"},
    "live.sweep_tip": {
        "en": "run γ = 1..8 on the prompt; plot measured speedup vs theory",
        "zh": "对提示词依次运行 γ = 1..8，画出实测加速比与理论值",
    },
    "live.pair_line": {"en": "pair:", "zh": "模型对："},
    "live.device_line": {"en": "device:", "zh": "设备："},
    "live.pair_desc": {
        "en": "target {target}, draft {draft}, vocabulary {vocab}, on {device}",
        "zh": "目标 {target}，草稿 {draft}，词表 {vocab} 个 token，运行于 {device}",
    },
    "live.model_size": {"en": "{name} ({millions:.2f} M params)", "zh": "{name}（{millions:.2f} M 参数）"},
    "live.pair_context": {
        "en": " · context {ctx} tokens (prompt + new tokens + γ must fit)",
        "zh": " · 上下文 {ctx} 个 token（提示词 + 新 token + γ 必须放得下）",
    },
    "live.no_tokenizer": {
        "en": "no tokenizer: type the prompt as token ids, e.g. 0 3 1",
        "zh": "没有分词器：请把提示词写成 token id，例如 0 3 1",
    },
    "live.stopping": {"en": "stopping…", "zh": "正在停止…"},
    "live.loading": {"en": "loading {target} + {draft}", "zh": "正在加载 {target} + {draft}"},
    "live.warming_up": {
        "en": "warming up: one untimed run on the prompt (first calls are slower)",
        "zh": "预热中：先在提示词上不计时地运行一次（首次调用较慢）",
    },
    "live.warmed_up": {
        "en": "ready: {pair} warmed up in {seconds:.1f} s at load (not counted in any measured run)",
        "zh": "就绪：{pair} 加载时预热用了 {seconds:.1f} 秒（不计入任何测量）",
    },
    "live.lookup_note": {
        "en": "Prompt lookup drafts by copying what followed the same words earlier in the prompt: it gains on "
        "a rewrite, an edit or code, and little on free text, which repeats nothing.",
        "zh": "提示词查找的草稿是照抄提示词中相同词语之后出现过的内容：改写、编辑和代码能加速，"
        "自由写作几乎不重复输入，所以收益很小。",
    },
    "live.no_pair": {
        "en": "no model pair loaded: press “Load pair” (bundled, or type a target and a draft)",
        "zh": "还没有加载模型对：请按“加载模型对”（用 bundled，或填写目标模型和草稿模型）",
    },
    "live.baseline_running": {"en": "autoregressive baseline…", "zh": "正在运行自回归基线…"},
    "live.drawing_failed": {"en": "drawing failed: {error}", "zh": "绘图失败：{error}"},
    "live.sweep_baseline": {
        "en": "γ sweep: autoregressive baseline (0/{total})…",
        "zh": "γ 扫描：自回归基线（0/{total}）…",
    },
    "live.sweep_gamma": {
        "en": "γ sweep: γ = {gamma} ({done}/{total})…",
        "zh": "γ 扫描：γ = {gamma}（{done}/{total}）…",
    },
    "live.sweep_done": {"en": "γ sweep done:", "zh": "γ 扫描完成："},
    "live.sweep_stopped": {"en": "γ sweep stopped:", "zh": "γ 扫描已停止："},
    "live.sweep_summary": {
        "en": "autoregressive {tps:.0f} tokens/s; {points}",
        "zh": "自回归 {tps:.0f} token/s；{points}",
    },
    "live.busy": {
        "en": "busy ({job}): wait for it or press Stop first",
        "zh": "正忙（{job}）：请等它结束，或先按“停止”",
    },
    "live.job_load": {"en": "load", "zh": "加载"},
    "live.job_generate": {"en": "generate", "zh": "生成"},
    "live.job_baseline": {"en": "baseline", "zh": "自回归基线"},
    "live.job_sweep": {"en": "sweep", "zh": "γ 扫描"},
    "live.job_polling": {"en": "polling", "zh": "轮询"},
    "live.prompt_empty_ids": {
        "en": "the prompt is empty: this pair has no tokenizer, type token ids such as 0 3 1",
        "zh": "提示词是空的：这对模型没有分词器，请输入 token id，例如 0 3 1",
    },
    "live.prompt_not_ids": {
        "en": "this pair has no tokenizer: type the prompt as token ids (e.g. 0 3 1), not {text!r}",
        "zh": "这对模型没有分词器：请把提示词写成 token id（例如 0 3 1），而不是 {text!r}",
    },
    "live.prompt_empty": {
        "en": "the prompt is empty: type at least one character",
        "zh": "提示词是空的：请至少输入一个字符",
    },
    "live.prompt_empty_tokens": {
        "en": "the prompt is empty after tokenization: type some text",
        "zh": "分词后提示词是空的：请输入一些文字",
    },
    "live.prompt_outside": {
        "en": "prompt token id {token} is outside the vocabulary of {vocab} tokens",
        "zh": "提示词中的 token id {token} 超出了词表（共 {vocab} 个 token）",
    },
    "live.baseline_empty": {
        "en": "the autoregressive baseline produced no tokens",
        "zh": "自回归基线没有生成任何 token",
    },
    "live.token_number": {"en": "token #", "zh": "token 序号"},
    "live.pick_hint": {
        "en": "generate some text, then pick a token to see its p and q",
        "zh": "先生成一段文字，再选一个 token，看它的 p 和 q",
    },
    "live.closeup_heading": {"en": "One token up close", "zh": "近看一个 token"},
    "live.closeup_hint": {
        "en": "(the money diagram at the bottom): pick a generated token",
        "zh": "（质量分解图在最下方）：选一个生成的 token",
    },
    "live.generating": {"en": "generating…", "zh": "正在生成…"},
    "live.pay_only": {
        "en": "when does this pay? only while the draft's cost c < α = {alpha:.2f}",
        "zh": "什么时候划算？只有草稿的成本比 c < α = {alpha:.2f} 时",
    },
    "live.pay_here": {
        "en": "when does this pay? c = {c:.2f} {op} α = {alpha:.2f} ({verdict}: need c < α)",
        "zh": "什么时候划算？c = {c:.2f} {op} α = {alpha:.2f}（{verdict}：需要 c < α）",
    },
    "live.cheap_enough": {"en": "cheap enough", "zh": "足够便宜"},
    "live.too_costly": {"en": "too costly", "zh": "太贵了"},
    "live.verify_cost": {
        "en": "verify step = {ratio:.2f} target steps (need ≈ 1: a memory-bound target)",
        "zh": "一次验证 = {ratio:.2f} 个目标模型步（需要 ≈ 1：目标模型受内存带宽限制时才成立）",
    },
    "live.payoff_source": {
        "en": "(Leviathan et al. 2023, arXiv:2211.17192, Corollary 3.9)",
        "zh": "（Leviathan 等，2023，arXiv:2211.17192，推论 3.9）",
    },
    "live.generate_first": {
        "en": "generate some text first, then pick a token",
        "zh": "请先生成一段文字，再选一个 token",
    },
    "live.token_outside": {
        "en": "token #{i} is outside the {n} generated tokens",
        "zh": "token #{i} 不在已生成的 {n} 个 token 之内",
    },
    "live.no_step_record": {"en": "token #{i} has no verify step record", "zh": "token #{i} 没有对应的验证步记录"},
    "live.stats_empty": {"en": "statistics appear here while generating", "zh": "生成时这里会显示统计数据"},
    "live.stats_title": {"en": "This run vs theory", "zh": "本次运行与理论对照"},
    "live.stats_counts": {"en": "γ · verify steps · tokens", "zh": "γ · 验证步数 · token 数"},
    "live.stats_rate": {
        "en": "draft acceptance rate (accepted / drafted)",
        "zh": "草稿接受率（被接受数 / 草稿数）",
    },
    "live.stats_alpha": {
        "en": "α = mean Σ min(p, q) over verified positions",
        "zh": "α = 所有验证位置上 Σ min(p, q) 的平均",
    },
    "live.stats_tokens_measured": {"en": "tokens per verify step: measured", "zh": "每个验证步的 token 数：实测"},
    "live.stats_tokens_theory": {
        "en": "tokens per verify step: theory (1 − α^(γ+1)) / (1 − α)",
        "zh": "每个验证步的 token 数：理论值 (1 − α^(γ+1)) / (1 − α)",
    },
    "live.stats_spec_tps": {"en": "speculative tokens/s", "zh": "投机解码 token/s"},
    "live.stats_ar_tps": {"en": "autoregressive tokens/s", "zh": "自回归 token/s"},
    "live.stats_speedup": {"en": "measured speedup", "zh": "实测加速比"},
    "live.stats_cost": {
        "en": "cost ratio c = draft token / target token",
        "zh": "成本比 c = 草稿 token 耗时 / 目标 token 耗时",
    },
    "live.stats_bound": {"en": "textbook speed-up at c", "zh": "在该 c 下的教科书加速比"},
    "live.stats_predicted": {"en": "cost-model prediction", "zh": "成本模型预测"},
    "live.stats_gamma": {"en": "suggested γ (cost model)", "zh": "建议的 γ（成本模型）"},
    "live.stats_note": {
        "en": "run the autoregressive baseline for tokens/s, c and the speedup predictions",
        "zh": "运行自回归基线后，才有 token/s、c 和加速比预测",
    },
    "live.status_generating": {
        "en": "generating… {n}/{max} tokens, {steps} verify steps, {tps} tokens/s",
        "zh": "正在生成… {n}/{max} 个 token，{steps} 个验证步，{tps} token/s",
    },
    "live.status_done": {"en": "done:", "zh": "完成："},
    "live.status_stopped": {"en": "stopped:", "zh": "已停止："},
    "live.status_final": {
        "en": "{n} tokens in {steps} verify steps, {seconds:.2f} s ({tps} tokens/s)",
        "zh": "{steps} 个验证步生成 {n} 个 token，用时 {seconds:.2f} s（{tps} token/s）",
    },
    "live.status_ar": {"en": " · autoregressive {tps} tokens/s", "zh": " · 自回归 {tps} token/s"},
    "live.status_speedup": {
        "en": " · speed-up {speedup} over {n} rounds",
        "zh": " · {n} 轮合计加速比 {speedup}",
    },
    "live.status_speedup_one": {"en": " · speed-up {speedup} over 1 round", "zh": " · 1 轮的加速比 {speedup}"},
    "live.over_rounds": {"en": "({n} rounds pooled)", "zh": "（{n} 轮合计）"},
    "live.over_one_round": {"en": "(1 round)", "zh": "（1 轮）"},
    "live.measuring": {
        "en": "timing round {n} (of at most {most}): speculative and plain decoding again, with the next seed",
        "zh": "正在计时第 {n} 轮（最多 {most} 轮）：用下一个种子再跑一次投机解码和普通解码",
    },
    "live.recorded_note": {
        "en": " (values from the recorded top-8 lists; the rest is in “other”)",
        "zh": "（数值取自记录下来的前 8 名列表，其余都在“其他”里）",
    },
    "live.cut_vocabulary": {
        "en": "The draft proposes only {n:,} of the {V:,} tokens (q = 0 on the rest): p puts {mass:.3f} there, "
        "all of it in the residual (p − q)⁺, so a rejection can still reach those tokens and the output stays exact.",
        "zh": "草稿只会提出 {V:,} 个 token 中的 {n:,} 个（其余的 q = 0）：p 在其余 token 上的概率是 {mass:.3f}，"
        "这部分全在残差 (p − q)⁺ 里，所以拒绝之后仍能抽到它们，输出依然精确。",
    },
    "live.closeup_title": {"en": "Token #{i} “{name}”: {fate}", "zh": "token #{i}“{name}”：{fate}"},
    "live.accepted_sub": {
        "en": "draft “{d}” kept (q = {qd:.3f}, p = {pd:.3f}): it came through the blue overlap min(p, q)",
        "zh": "草稿“{d}”被保留（q = {qd:.3f}，p = {pd:.3f}）：它来自蓝色的重叠部分 min(p, q)",
    },
    "live.accepted_explain": {
        "en": "The draft proposed “{d}” with q = {qd:.3f}; the target gives it p = {pd:.3f}, so it was kept "
        "with probability min(1, p/q) = {keep:.3f}: it came through the blue overlap min(p, q).",
        "zh": "草稿以 q = {qd:.3f} 提出“{d}”；目标模型给它 p = {pd:.3f}，所以它以概率 min(1, p/q) = {keep:.3f} "
        "被保留：它来自蓝色的重叠部分 min(p, q)。",
    },
    "live.rejected_sub": {
        "en": "draft “{d}” rejected (q = {qd:.3f} > p = {pd:.3f}) → “{name}” drawn from the green (p − q)⁺",
        "zh": "草稿“{d}”被拒绝（q = {qd:.3f} > p = {pd:.3f}）→ 从绿色的 (p − q)⁺ 抽出“{name}”",
    },
    "live.rejected_explain": {
        "en": "The draft proposed “{d}” with q = {qd:.3f} but the target gives it only p = {pd:.3f}, so it "
        "was kept with probability p/q = {keep:.3f} only, and it was rejected; “{name}” was then "
        "drawn from the green residual (p − q)⁺ / Z.",
        "zh": "草稿以 q = {qd:.3f} 提出“{d}”，但目标模型只给它 p = {pd:.3f}，所以它只以概率 p/q = {keep:.3f} "
        "被保留，这次被拒绝了；随后从绿色的修复分布 (p − q)⁺ / Z 抽出了“{name}”。",
    },
    "live.bonus_sub": {
        "en": "all γ drafts passed: one more token drawn straight from the target's p",
        "zh": "γ 个草稿全部通过：再直接从目标模型的 p 抽一个 token",
    },
    "live.bonus_explain": {
        "en": "All γ drafts were accepted, so the target's distribution after them, computed in the same "
        "verify pass, gives one more token for free; the draft proposed nothing here.",
        "zh": "γ 个草稿全部被接受，目标模型在同一次验证里已经算出了它们之后的分布，于是白得一个 token；"
        "草稿在这个位置没有提出任何东西。",
    },
    "live.target_sub": {"en": "a plain draw from the target p", "zh": "直接从目标模型的 p 抽取"},
    "live.target_explain": {"en": "A plain draw from the target p.", "zh": "直接从目标模型的 p 抽取。"},
    "live.closeup_alpha": {
        "en": " · exact acceptance probability here Σ min(p, q) = <b>{alpha:.3f}</b> (the diagram lumps the "
        "tail into “other”, so its Σ min can be a little larger)",
        "zh": " · 此处的精确接受概率 Σ min(p, q) = <b>{alpha:.3f}</b>（图把长尾并进了“其他”，"
        "所以图上的 Σ min 可能略大一些）",
    },
    "live.closeup_info": {
        "en": "token #{i} “{name}” (id {token}) · verify step {step}, draft position {position} of γ = {gamma}",
        "zh": "token #{i}“{name}”（id {token}）· 第 {step} 个验证步，γ = {gamma} 个草稿中的第 {position} 个",
    },
    "live.payoff_intro": {
        "en": "When does this pay? Only while the draft's cost ratio c < α. ",
        "zh": "什么时候划算？只有草稿的成本比 c < α 时。",
    },
    "live.payoff_here": {
        "en": "Here α = {alpha:.2f}, c = {c:.2f} → {gain}.",
        "zh": "这里 α = {alpha:.2f}，c = {c:.2f} → {gain}。",
    },
    "live.payoff_no_c": {
        "en": "Here α = {alpha:.2f}; c needs the autoregressive baseline.",
        "zh": "这里 α = {alpha:.2f}；c 需要先跑自回归基线。",
    },
    "live.payoff_others": {"en": " At this α, {others}.", "zh": "在这个 α 下，{others}。"},
    "live.payoff_verify": {
        "en": " These figures assume a verify step (γ + 1 tokens at once) costs one target step; here it costs "
        "{verify:.2f}, which is ≈ 1 only for a memory-bound target.",
        "zh": "这些估计假设一次验证（同时处理 γ + 1 个 token）只花一个目标模型步；这里花了 {verify:.2f} 步，"
        "只有目标模型受内存带宽限制时才 ≈ 1。",
    },
    "live.list_sep": {"en": ", ", "zh": "；"},
    "live.payoff_no_gain": {"en": "no gain (best γ = 0: don't speculate)", "zh": "没有收益（最佳 γ = 0：不要投机）"},
    "live.payoff_gain": {"en": "{speedup:.2f}× (best γ = {gamma})", "zh": "{speedup:.2f}×（最佳 γ = {gamma}）"},
    # the live view's model choice, chat template, end token and γ "auto" (specviz.widgets.live.models, live.controls)
    "live.models": {"en": "models", "zh": "模型"},
    "live.choice_bundled": {"en": "bundled pair (Shakespeare, offline)", "zh": "内置模型对（莎士比亚，离线可用）"},
    "live.choice_lookup": {"en": "{name} + prompt lookup", "zh": "{name} + 提示词查找"},
    "live.choice_head": {"en": "{name} + learned head (EAGLE-style)", "zh": "{name} + 训练所得的特征草稿头"},
    "live.choice_not_fetched": {"en": "{label} (not fetched yet)", "zh": "{label}（尚未下载）"},
    "vllm.model": {"en": "model_name", "zh": "模型名"},
    "vllm.model_hint": {"en": "the only one on the page", "zh": "页面上唯一的那个"},
    "live.choice_corrupted": {"en": "{label} (corrupted: fetch again)", "zh": "{label}（文件已损坏：请重新下载）"},
    "live.choice_custom": {
        "en": "other: type a target and a draft below",
        "zh": "其他：在下面输入目标模型和草稿模型",
    },
    "live.models_hint": {
        "en": "Pick a pair, or type a catalogue name, a folder, a .gguf file or a hub id, then press Load pair.",
        "zh": "选一个模型对，或输入目录中的模型名、文件夹、.gguf 文件或模型仓库 id，然后按“加载模型对”。",
    },
    "live.model_fetched": {"en": "{name}: fetched, ready to load", "zh": "{name}：已下载，可以加载"},
    "live.model_needs_fetch": {
        "en": "{name}: not fetched yet; run {command} once in a terminal (loading never downloads)",
        "zh": "{name}：尚未下载；请先在终端运行一次 {command}（加载时从不下载）",
    },
    "live.not_fetched": {
        "en": "The {role} model {name} has not been fetched yet: run “specviz models fetch {name}” once in a "
        "terminal, then press Load pair again (loading never downloads).",
        "zh": "{role} {name} 尚未下载：请先在终端运行一次“specviz models fetch {name}”，再按“加载模型对”"
        "（加载时从不下载）。",
    },
    "live.corrupted": {
        "en": "The {role} model {name} at {path} cannot be used ({problem}): run “specviz models fetch {name} "
        "--force” once in a terminal, then press Load pair again.",
        "zh": "{role} {name}（{path}）无法使用（{problem}）：请先在终端运行一次“specviz models fetch {name} "
        "--force”，再按“加载模型对”。",
    },
    "live.chat": {"en": "use the chat template", "zh": "使用聊天模板"},
    "live.show_prompt": {"en": "Show the formatted prompt", "zh": "显示格式化后的提示词"},
    "live.show_prompt_tip": {
        "en": "the exact text the model reads: the prompt inside the chat template, special tokens included",
        "zh": "模型实际读到的文本：套上聊天模板的提示词，包括特殊 token",
    },
    "live.formatted_head": {"en": "What the model reads ({n} tokens):", "zh": "模型读到的内容（{n} 个 token）："},
    "live.formatted_plain": {
        "en": "no chat template: the prompt as typed",
        "zh": "没有使用聊天模板：就是输入的提示词",
    },
    "live.formatted_chat": {
        "en": "the prompt inside the model's chat template",
        "zh": "套上模型聊天模板之后的提示词",
    },
    "live.ignore_eos": {
        "en": "ignore the end token (keep generating after the end of the turn)",
        "zh": "忽略结束 token（回合结束后继续生成）",
    },
    "live.gamma_auto": {"en": "auto", "zh": "自动"},
    "live.gamma_auto_longest": {"en": "auto (longest {longest})", "zh": "自动（最长 {longest}）"},
    "live.steps_title": {"en": "Verify steps, latest first", "zh": "验证步（最新的在前）"},
    "live.steps_more": {"en": "the latest {shown} of {total}", "zh": "共 {total} 步，显示最近 {shown} 步"},
    "live.steps_empty": {
        "en": "each verify step appears here: how many tokens were drafted (γ) and how many kept",
        "zh": "这里会逐个列出验证步：起草了几个 token（γ），保留了几个",
    },
    "live.steps_col_step": {"en": "step", "zh": "步"},
    "live.steps_col_gamma": {"en": "γ drafted", "zh": "起草数 γ"},
    "live.steps_col_accepted": {"en": "accepted", "zh": "接受数"},
    "live.steps_col_tokens": {"en": "tokens out", "zh": "产出的 token"},
    # the draft tree of one verify step (specviz.widgets.live.tree_panel, the tree control in settings)
    "live.tree": {"en": "draft tree", "zh": "草稿树"},
    "live.tree_off": {"en": "off (a chain)", "zh": "关（单链）"},
    "live.tree_heading": {"en": "One verify step's draft tree", "zh": "一个验证步的草稿树"},
    "live.tree_hint": {
        "en": "(a tree run): the step of the token picked above, or any step with the slider; each node coloured "
        "by its fate, the accepted path in bold, and R where the walk stopped",
        "zh": "（使用草稿树的运行）：上面选中的 token 所在的验证步，或用滑块选任意一步；节点按结局着色，"
        "接受路径加粗，并画出验证停止处的 R",
    },
    "live.tree_step": {"en": "verify step", "zh": "验证步"},
    "live.tree_none": {
        "en": "verify step {step} drafted no tree (γ = {gamma})",
        "zh": "第 {step} 个验证步没有起草树（γ = {gamma}）",
    },
    # figures of a real model's run (specviz.figures: run_data, per_position, ..., live_panels)
    "run.other": {"en": "other", "zh": "其他"},
    "run.per_position_title": {"en": "Acceptance per draft position", "zh": "各草稿位置的接受率"},
    "run.per_position_sub": {
        "en": "α = {alpha:.3f} ({steps} steps): conditional ≈ α, unconditional ≈ α^i",
        "zh": "α = {alpha:.3f}（{steps} 步）：条件接受率 ≈ α，无条件接受率 ≈ α^i",
    },
    "run.per_position_empty": {
        "en": "press Generate: bars fill in as the target verifies drafts",
        "zh": "按“生成”：目标模型每验证一批草稿，柱子就会长出来",
    },
    "run.unconditional": {"en": "unconditional: accepted / steps", "zh": "无条件：被接受数 / 步数"},
    "run.conditional": {"en": "conditional: accepted / reached", "zh": "条件：被接受数 / 到达数"},
    "run.theory_power": {"en": "theory α^i", "zh": "理论值 α^i"},
    "run.position_hover": {
        "en": "position %{x}: %{y:.3f}<extra></extra>",
        "zh": "位置 %{x}：%{y:.3f}<extra></extra>",
    },
    "run.draft_position": {"en": "draft position i", "zh": "草稿位置 i"},
    "run.acceptance_rate": {"en": "acceptance rate", "zh": "接受率"},
    "run.hist_title": {"en": "Accepted drafts per verify step", "zh": "每个验证步被接受的草稿数"},
    "run.hist_sub": {
        "en": "{steps} steps, α = {alpha:.3f}: tokens/step {mean:.2f} (theory {theory:.2f})",
        "zh": "{steps} 步，α = {alpha:.3f}：每步 token 数 {mean:.2f}（理论值 {theory:.2f}）",
    },
    "run.hist_empty": {
        "en": "theory from α: α^k (1 − α) for k < γ, α^γ at k = γ",
        "zh": "由 α 得到的理论值：k < γ 时为 α^k (1 − α)，k = γ 时为 α^γ",
    },
    "run.measured_steps": {"en": "measured steps", "zh": "实测步数"},
    "run.theory_alpha": {"en": "theory from α", "zh": "由 α 得到的理论值"},
    "run.hist_hover": {"en": "k = %{x}: %{y} steps<extra></extra>", "zh": "k = %{x}：%{y} 步<extra></extra>"},
    "run.hist_theory_hover": {
        "en": "k = %{x}: %{y:.1f} expected<extra></extra>",
        "zh": "k = %{x}：期望 %{y:.1f} 步<extra></extra>",
    },
    "run.accepted_k": {"en": "accepted drafts k", "zh": "被接受的草稿数 k"},
    "run.verify_steps": {"en": "verify steps", "zh": "验证步数"},
    "run.tps_title": {"en": "Tokens per second", "zh": "每秒 token 数"},
    "run.speculative": {"en": "speculative", "zh": "投机解码"},
    "run.autoregressive": {"en": "autoregressive", "zh": "自回归"},
    "run.tps_sub": {"en": "measured speedup {speedup:.2f}×", "zh": "实测加速比 {speedup:.2f}×"},
    "run.tps_predicts": {"en": " (cost model predicts {speedup:.2f}×)", "zh": "（成本模型预测 {speedup:.2f}×）"},
    "run.tps_no_ar": {"en": "autoregressive baseline not run yet", "zh": "还没有运行自回归基线"},
    "run.press_generate": {"en": "press Generate", "zh": "请按“生成”"},
    "run.tps_measured": {"en": "measured tokens/s", "zh": "实测 token/s"},
    "run.tps_predicted": {"en": "cost-model prediction", "zh": "成本模型预测"},
    "run.tps_hover": {"en": "%{x}: %{y:.1f} tokens/s<extra></extra>", "zh": "%{x}：%{y:.1f} token/s<extra></extra>"},
    "run.tps_predicted_hover": {
        "en": "predicted %{y:.1f} tokens/s<extra></extra>",
        "zh": "预测 %{y:.1f} token/s<extra></extra>",
    },
    "run.decoding": {"en": "decoding", "zh": "解码方式"},
    "run.tps_axis": {"en": "generated tokens / s", "zh": "每秒生成的 token 数"},
    "run.sweep_title": {"en": "Speedup vs γ: measured against theory", "zh": "加速比随 γ 的变化：实测与理论"},
    "run.sweep_best": {
        "en": "best measured γ = {gamma} ({speedup:.2f}×)",
        "zh": "实测最佳 γ = {gamma}（{speedup:.2f}×）",
    },
    "run.sweep_empty": {
        "en": "press “γ sweep” to run γ = 1..8 on the prompt",
        "zh": "按“γ 扫描”，对提示词依次运行 γ = 1..8",
    },
    "run.measured": {"en": "measured", "zh": "实测"},
    "run.textbook_bound": {"en": "textbook speed-up", "zh": "教科书加速比"},
    "run.cost_model": {"en": "cost model (measured step times)", "zh": "成本模型（用实测的每步耗时）"},
    "run.no_speedup": {"en": "no speedup", "zh": "没有加速"},
    "run.sweep_hover_measured": {
        "en": "γ = %{x}: %{y:.2f}× measured<extra></extra>",
        "zh": "γ = %{x}：实测 %{y:.2f}×<extra></extra>",
    },
    "run.sweep_hover_bound": {
        "en": "γ = %{x}: textbook %{y:.2f}×<extra></extra>",
        "zh": "γ = %{x}：教科书 %{y:.2f}×<extra></extra>",
    },
    "run.sweep_hover_predicted": {
        "en": "γ = %{x}: predicted %{y:.2f}×<extra></extra>",
        "zh": "γ = %{x}：预测 %{y:.2f}×<extra></extra>",
    },
    "run.sweep_x": {"en": "γ (drafted tokens per verify step)", "zh": "γ（每个验证步的草稿 token 数）"},
    "run.sweep_y": {"en": "speedup over autoregressive", "zh": "相对自回归的加速比"},
    "run.sweep_auto": {"en": "auto γ (measured)", "zh": "自动 γ（实测）"},
    "run.sweep_hover_auto": {
        "en": "auto γ: %{y:.2f}× measured<extra></extra>",
        "zh": "自动 γ：实测 %{y:.2f}×<extra></extra>",
    },
    "run.gamma_steps_title": {"en": "γ at each verify step", "zh": "每个验证步的 γ"},
    "run.gamma_steps_sub": {
        "en": "{setting}: {mean:.2f} drafted per step on average, longest {longest}, {steps} steps",
        "zh": "{setting}：平均每步起草 {mean:.2f} 个，最长 {longest} 个，共 {steps} 步",
    },
    "run.gamma_steps_auto": {"en": "γ auto", "zh": "γ 自动"},
    "run.gamma_steps_empty": {
        "en": "how many tokens each verify step drafted appears here",
        "zh": "这里会显示每个验证步起草了几个 token",
    },
    "run.gamma_drafted": {"en": "drafted (γ of the step)", "zh": "起草数（该步的 γ）"},
    "run.gamma_accepted": {"en": "accepted", "zh": "被接受数"},
    "run.gamma_drafted_hover": {
        "en": "step %{x}: %{y} drafted<extra></extra>",
        "zh": "第 %{x} 步：起草 %{y} 个<extra></extra>",
    },
    "run.gamma_accepted_hover": {
        "en": "step %{x}: %{y} accepted<extra></extra>",
        "zh": "第 %{x} 步：接受 %{y} 个<extra></extra>",
    },
    "run.verify_step_axis": {"en": "verify step", "zh": "验证步"},
    "run.tokens_axis": {"en": "tokens", "zh": "token 数"},
    "run.payoff_title": {
        "en": "When does speculation pay? α = {alpha:.3f}<br>best textbook speed-up "
        "(1 − α^(γ+1)) / ((1 − α)(γc + 1)) over γ = 0..{max_gamma}, against the draft's cost c",
        "zh": "投机什么时候划算？α = {alpha:.3f}<br>在 γ = 0..{max_gamma} 中取最佳的教科书加速比 "
        "(1 − α^(γ+1)) / ((1 − α)(γc + 1))，随成本比 c 变化",
    },
    "run.payoff_best": {"en": "best speed-up over γ", "zh": "对 γ 取最佳的加速比"},
    "run.payoff_hover": {
        "en": "c = %{x:.2f}: %{y:.2f}× at γ = %{customdata}<extra></extra>",
        "zh": "c = %{x:.2f}：γ = %{customdata} 时 %{y:.2f}×<extra></extra>",
    },
    "run.payoff_points": {"en": "draft costs compared", "zh": "比较的几种草稿成本"},
    "run.payoff_break_even": {"en": "c = α: beyond it no γ pays", "zh": "c = α：超过它，任何 γ 都不划算"},
    "run.payoff_no_gain": {"en": "no speed-up", "zh": "没有加速"},
    "run.payoff_x": {"en": "c = draft step / target step", "zh": "c = 草稿步耗时 / 目标模型步耗时"},
    "run.payoff_y": {"en": "speed-up over plain decoding", "zh": "相对普通解码的加速比"},
    "run.token_axis": {
        "en": "token (top of p ∪ top of q, then everything else)",
        "zh": "token（p 的前几名 ∪ q 的前几名，再加上其余全部）",
    },
    "run.target_title": {"en": "Target distribution p", "zh": "目标分布 p"},
    "run.p_only": {
        "en": "the draft proposed nothing at this position: only p (its outline)",
        "zh": "草稿在这个位置没有提出任何东西：只有 p（它的轮廓）",
    },
    "run.money_title": {"en": "The money diagram of a generated token", "zh": "一个生成 token 的质量分解图"},
    "run.placeholder": {
        "en": "no token selected yet: this is the cat/dog/fish example",
        "zh": "还没有选中 token：这是 cat/dog/fish 的例子",
    },
    # a vLLM server's counters (specviz.widgets.live.vllm)
    "vllm.heading": {"en": "A vLLM server's speculative decoding, live", "zh": "vLLM 服务器的投机解码，实时显示"},
    "vllm.server": {"en": "vLLM server", "zh": "vLLM 服务器"},
    "vllm.every": {"en": "every (s)", "zh": "间隔（秒）"},
    "vllm.read_once": {"en": "Read once", "zh": "读取一次"},
    "vllm.start": {"en": "Start polling", "zh": "开始轮询"},
    "vllm.table_empty": {"en": "press Read once or Start polling", "zh": "请按“读取一次”或“开始轮询”"},
    "vllm.last_seconds": {"en": "last {seconds:.1f} s", "zh": "最近 {seconds:.1f} 秒"},
    "vllm.the_last_seconds": {"en": "the last {seconds:.1f} s", "zh": "最近 {seconds:.1f} 秒"},
    "vllm.totals": {"en": "totals since the server started", "zh": "服务器启动以来的总计"},
    "vllm.restarted": {"en": " (the server restarted)", "zh": "（服务器重启过）"},
    "vllm.row_server": {"en": "server · engines", "zh": "服务器 · 引擎数"},
    "vllm.row_over": {"en": "counts over", "zh": "计数范围"},
    "vllm.row_counts": {"en": "drafts · draft tokens · accepted", "zh": "草稿次数 · 草稿 token 数 · 被接受数"},
    "vllm.row_rate": {"en": "acceptance rate = accepted / draft tokens", "zh": "接受率 = 被接受数 / 草稿 token 数"},
    "vllm.row_length": {
        "en": "mean acceptance length = 1 + accepted / drafts",
        "zh": "平均接受长度 = 1 + 被接受数 / 草稿次数",
    },
    "vllm.row_per_position": {
        "en": "per-position acceptance = accepted at i / drafts",
        "zh": "各位置接受率 = 位置 i 的被接受数 / 草稿次数",
    },
    "vllm.row_alpha": {"en": "α implied by the mean acceptance length", "zh": "由平均接受长度推出的 α"},
    "vllm.row_tps": {"en": "accepted tokens/s", "zh": "被接受的 token/s"},
    "vllm.table_title": {"en": "vLLM's speculative-decoding counters", "zh": "vLLM 的投机解码计数器"},
    "vllm.status": {"en": "read {url} at {stamp}: {what}", "zh": "{stamp} 读取了 {url}：{what}"},
}
