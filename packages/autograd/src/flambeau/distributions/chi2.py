import flambeau as F

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi-squared distribution with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2).

    >>> from flambeau.distributions import Chi2
    >>> d = Chi2(df=2.0)
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([1.0, 2.0]))
    tensor([-1.1931, -1.6931])
    >>> d.mean, d.variance
    (tensor(2.), tensor(4.))
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if not isinstance(df, F.Tensor):
            df = F.tensor(float(df))
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
