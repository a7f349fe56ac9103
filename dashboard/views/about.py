"""About: what riskgrid is for (and not for), the methods, their equations, the grids and
acceptance standards it judges meters by (read from their registries), and the papers."""

import streamlit as st

from ranking_core.grids.registry import ZoneGrid, grids
from ranking_core.learn import LearnSettings
from ranking_core.meter.standards.acceptance import profiles

INTENDED_USE = (
    "**Intended use.** riskgrid is a research and device-evaluation tool: it learns clinical "
    "error grids from clinicians' ratings and measures the accuracy of glucose meters and "
    "sensors against published error grids and acceptance standards. It is not a medical "
    "device and must not be used to make treatment decisions for a patient."
)

DEFAULTS = LearnSettings()  # the page states the defaults the learner uses

st.title("About riskgrid")
st.markdown(
    """
A **clinical error grid** gives every pair (reference glucose, estimated glucose) in 0..600 mg/dL
a risk from 0 (none) to 4 (extreme). The Surveillance Error Grid (SEG, Klonoff et al. 2014) was
built from 8,420 ratings by 234 clinicians. riskgrid learns such a grid from a few hundred ratings
by **regularized ranking** in a reproducing-kernel Hilbert space, as Kriukova, Pereverzyev and
Tkachenko (2014) propose.
"""
)
st.info(INTENDED_USE)

st.header("Regularized ranking")
st.markdown(
    "Given ratings $z = \\{(x_i, y_i)\\}_{i=1}^m$ with $x = (\\text{REF}, \\text{estimate})$, the "
    "ranking function minimises the magnitude-preserving least-squares ranking loss. In the "
    "spectral form of Kriukova et al. (eq. 4 and §3):"
)
st.latex(
    r"f_z^\lambda = g_\lambda\!\left(\tfrac{1}{m^2} S_x^* D S_x\right) \tfrac{1}{m^2} S_x^* D y,"
    r"\qquad D = mI - \mathbf{1}\mathbf{1}^\top ."
)
st.markdown(
    "With the Gram matrix $K_{ij} = K(x_i, x_j)$ and the centring matrix "
    "$C = I - \\mathbf{1}\\mathbf{1}^\\top/m$, the kernel coefficients are"
)
st.latex(
    r"c(\lambda) = g_\lambda(\tilde K)\, C y / m, \qquad \tilde K = C K C / m "
    r"= U \operatorname{diag}(\sigma) U^\top ,"
)
st.markdown(
    "so one eigendecomposition ($O(m^3)$) serves every $\\lambda$ and every filter at $O(m^2)$ "
    "each. This is why the λ slider on *Learn a grid* answers at once: it re-solves from the "
    "cached decomposition. Predictions $f(x) = \\sum_i c_i K(x, x_i) + b$ are put on the rating "
    "scale by choosing $b$ so that the mean prediction on the training set is the mean rating. "
    f"The default kernel is Laplacian on log glucose, $K(x, x') = \\exp(-\\lVert t(x) - "
    f"t(x')\\rVert_1/\\gamma)$ with γ = {DEFAULTS.gamma:g} and $t(g) = 600\\,\\log(1 + g/g_0)"
    f"/\\log(1 + 600/g_0)$, $g_0 = {DEFAULTS.log_offset:g}$ mg/dL, which spreads the low "
    "glucose where errors matter most; the Gaussian kernel $\\exp(-\\lVert x - x'\\rVert^2/"
    "\\gamma)$ and plain mg/dL coordinates are options of *Learn a grid*. On the 601 × 601 "
    "lattice the surface factorises as $F = A\\,\\mathrm{diag}(c)\\,B^\\top$."
)

st.header("Spectral filters")
FILTER_ROWS = (
    (
        "Lavrentiev",
        r"$1/(\sigma + \lambda)$",
        "1",
        "Kriukova et al. eq. (4); = MPRank (Cortes et al. eq. 13), "
        "RankRLS (Pahikkala et al. eq. 21)",
    ),
    (
        "iterated Lavrentiev, order k",
        r"$(1 - (\lambda/(\sigma+\lambda))^k)/\sigma$",
        "k",
        "Kriukova et al. eq. (13) for k = 2",
    ),
    (
        "spectral cut-off",
        r"$1/\sigma$ if $\sigma \ge \lambda$, else 0",
        "∞",
        "Kriukova et al. ref. [7]",
    ),
    (
        "Landweber",
        r"$(1 - (1 - \mu\sigma)^n)/\sigma$, $n = \lceil 1/\lambda \rceil$",
        "∞",
        "Kriukova et al. §3",
    ),
    ("Showalter", r"$(1 - e^{-\sigma/\lambda})/\sigma$", "∞", "Kriukova et al. §3"),
)
st.markdown(
    "| filter | $g_\\lambda(\\sigma)$ | qualification | source |\n|---|---|---|---|\n"
    + "\n".join(f"| {' | '.join(row)} |" for row in FILTER_ROWS)
)

st.header("Choosing λ")
st.markdown(
    """
- **Hold-out** (the paper's protocol, §4.1/§4.3): the first half of the ratings fits, the second
  half picks λ from $\\lambda_j = 0.95^j$, $j < 200$, by pairwise misranking.
- **k-fold** cross-validation, then a refit on all ratings. The validation score is either the
  pairwise misranking of the validation ratings or their mean absolute error
  $\\frac{1}{n}\\sum_i |f(x_i) - y_i|$. The mean absolute error is the default: it changes smoothly
  with λ, where the misranking of a few validation ratings jumps from one λ to the next, and on
  400 SEG ratings it lowered the misranking of the learned grid from 1.69 % to 1.51 %
  (with 101 zero-risk points on the diagonal instead of 41).
- **A-priori rule** $\\lambda(m) = \\alpha\\, m^{-\\beta/2}$ (Kriukova et al. Corollary 6, §4.4):
  λ₊ is found on small subsets (m = 20, 30, 40, 50, several draws each) and
  $\\log \\lambda = \\log\\alpha - (\\beta/2) \\log m$ is fitted with $0 < \\beta \\le 1$.
"""
)

st.header("Learning from a real panel")
st.markdown(
    "Real panels have outlying answers, raters who use the scale differently and answers on a "
    "coarse scale. With *Robust learning* on (the robust recipe: *Learn a grid* offers it for "
    "a rating set with raters or coarse answers), rater $k$ is modelled as answering scenario "
    "$x_i$ with a rounded, clipped reading of the consensus risk $f$:"
)
st.latex(
    r"a_i = \operatorname{round}_h\!\big(\operatorname{clip}_{[0,4]}"
    r"(b_k + s_k f(x_i) + \varepsilon_i)\big), \qquad \varepsilon_i \sim N(0, \sigma_k^2)."
)
st.markdown(
    r"""
- The fit minimises $\sum_i w_i (\tilde a_i - f(x_i) - b)^2 + m\lambda \lVert f\rVert^2_H$
  (Kriukova et al. eq. 4 with a weight per rating): $\tilde a_i$ is the answer corrected for its
  rater's offset $b_k$ and scale $s_k$ and, for a rounded answer, its expected unrounded value;
  $w_i$ is a Huber (or Tukey) weight of the standardised residual times the rater's weight
  $\propto 1/\sigma_k^2$. Each reweighting re-solves from the one eigendecomposition.
- The noise $\sigma_k$ is the median absolute residual of the answers as given, less the
  rounding variance $h^2/12$ of a coarse scale (Sheppard 1898). A rating more than 3 noise sd
  from the consensus is flagged; the *Plan a survey* page lists the flags and every rater's
  offset, scale, noise and agreement, with Krippendorff's α.
- λ is chosen by the mean absolute validation error, and the grid is made **monotone**: the
  nearest grid that is 0 on the diagonal and rises away from it along every row and column, as
  the SEG does.
- The **uncertainty band** is the posterior sd of the Gaussian process the weighted ranker is the
  mean of. *Learn a grid* shows it for a robust fit (*Show: Uncertainty*: the grid is drawn pale
  where the 95 % band leaves the risk category open) and offers it as `band.csv`;
  `riskgrid learn --band` writes it as files. *Plan a survey* proposes the next pairs to rate
  where they most reduce the grid's summed posterior variance.
"""
)

st.header("Measures")
st.markdown("Pairwise misranking (Kriukova et al. eq. 1), the share of pairs in the wrong order:")
st.latex(
    r"\mathrm{mis}(f) = \frac{\#\{(i,j) : y_i > y_j,\ f(x_i) \le f(x_j)\}}"
    r"{\#\{(i,j) : y_i > y_j\}}"
)
st.markdown(
    "Grids are also compared by the distribution of $|\\Delta y|$ in bins of 0.5 (Kriukova et al. "
    "Table 3) and by agreement of the SEG's 8 risk categories. The collaborative-filtering page "
    "reports MSD and M1D (Cortes et al. eqs. 67–68) and NDCG@10 (Le and Smola §3.2)."
)

st.header("Reference grids")
st.markdown(
    "- **SEG** (Klonoff et al. 2014): the official risk table, which riskgrid does not ship; "
    "give its path or upload it in the sidebar.\n"
    + "".join(f"- **{grid.title}**: {grid.purpose} ({grid.citation})\n" for grid in grids(ZoneGrid))
    + "- Without the SEG table, the rating-panel simulator uses a smooth built-in surface defined "
    "from the Parkes type-1 zones, so every page works on a fresh machine."
)

st.header("Acceptance standards")
st.markdown(
    "The meter report judges paired readings by the criteria of each standard below: every "
    "criterion's count and share, its exact one-sided 95 % Clopper–Pearson lower bound "
    "(Korn–Graubard effective sample size when pairs come in clusters of subjects or sensors) "
    "and its verdict.\n\n"
    + "".join(
        f"- **{profile.title}** ({len(profile.criteria)} criteria): {profile.citation}\n"
        for profile in profiles()
    )
)

st.header("Rating surveys")
st.markdown(
    "A panel of clinicians rates (reference, estimate) pairs through personal links "
    "(`riskgrid survey create`, `riskgrid survey invite`): one pair at a time on the 0–4 risk "
    "scale, with hidden repeats (test-retest) and check pairs of obvious answer. The organiser "
    "follows each rater's progress and agreement, the panel report and the grid learned so far; "
    "the next batch of pairs is planned where that grid is least sure."
)

st.header("Papers")
st.markdown(
    """
1. G. Kriukova, S. Pereverzyev, P. Tkachenko. *On the convergence rate and some applications of
   regularized ranking algorithms.* RICAM-Report 2014-21 (J. Complexity 2016).
2. C. Cortes, M. Mohri, A. Rastogi. *An alternative ranking problem for search engines* (MPRank).
   WEA 2007.
3. T. Pahikkala et al. *An efficient algorithm for learning to rank from preference graphs*
   (RankRLS). Machine Learning 75, 2009.
4. Q. V. Le, A. J. Smola. *Direct optimization of ranking measures.* 2007.
5. J. C. Duchi, L. W. Mackey, M. I. Jordan. *On the consistency of ranking algorithms.* ICML 2010.
6. D. C. Klonoff et al. *The surveillance error grid.* J. Diabetes Sci. Technol. 8(4), 2014.
"""
)
