"""The message catalogue: every piece of UI and figure text of specviz, in English ("en") and Chinese ("zh").

One dict, `MESSAGES`: key -> {"en": text, "zh": text}. Keys are grouped by where they are used
(`lang.*`, `dashboard.*`, `money.*`, `exercise.*`, ...). Text may hold `str.format` fields,
filled by `specviz.i18n.t(key, **fields)`. A test checks that every key has both languages and
that every `t("...")` in the code names a key that exists.
"""

MESSAGES: dict[str, dict[str, str]] = {
    "lang.name": {"en": "English", "zh": "中文"},
    "lang.toggle": {"en": "Language", "zh": "语言"},
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
    "exercise.not_number": {"en": "expected a number, got {got}.", "zh": "需要一个数，得到的是 {got}。"},
    "exercise.not_callable": {"en": "expected a function, got {got}.", "zh": "需要一个函数，得到的是 {got}。"},
    "exercise.case_failed": {
        "en": "for p = {p}, q = {q} it returned {got}, expected {want}.",
        "zh": "当 p = {p}、q = {q} 时返回了 {got}，应为 {want}。",
    },
    "exercise.case_raised": {
        "en": "for p = {p}, q = {q} it raised {error}.",
        "zh": "当 p = {p}、q = {q} 时抛出了 {error}。",
    },
    "exercise.audit_failed": {
        "en": "the audit rejects it for p = {p}, q = {q}: {why}",
        "zh": "在 p = {p}、q = {q} 上审计未通过：{why}",
    },
    "exercise.no_more_hints": {
        "en": "No more hints: see solution('{id}').",
        "zh": "没有更多提示了：见 solution('{id}')。",
    },
    "exercise.hint": {"en": "Hint {k} of {n}", "zh": "提示 {k}/{n}"},
    "exercise.solution": {"en": "Solution to exercise {id}", "zh": "练习 {id} 的参考答案"},
}
