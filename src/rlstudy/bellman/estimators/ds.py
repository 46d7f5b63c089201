"""DS, "double sampling" without the second sample: s^_{m+1} = s_{m+1}, so j^ = j (biased by the
variance of the noise: E[j^2] = residual^2 + Var(j | s_m, a_m))."""

from .base import Estimator

DS = Estimator("DS", "s_{m+1} itself (no second sample)", second_state=lambda draw: None, lookahead=1,
               rows_per_sample=2)
