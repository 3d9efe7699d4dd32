from . import constraints
from .independent import Independent
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of a Normal(loc, scale) vector: a distribution on the simplex.

    >>> from flambeau.distributions import LogisticNormal
    >>> d = LogisticNormal(loc=flambeau.zeros(2), scale=flambeau.ones(2))
    >>> d.sample((2,)).shape
    flambeau.Size([2, 3])
    >>> d.log_prob(flambeau.tensor([0.2, 0.3, 0.5]))
    tensor(1.2980)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(
            Independent(base_dist, 1), StickBreakingTransform(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
