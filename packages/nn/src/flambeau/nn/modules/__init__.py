"""The module classes of flambeau.nn, one file per family."""

from .activation import ReLU, Sigmoid, Softsign, Tanh, Tanhshrink, Threshold
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .distance import CosineSimilarity, PairwiseDistance
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import (
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .module import Module

__all__ = [
    "Module",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "Identity",
    "Linear",
    "Bilinear",
    "Flatten",
    "Unflatten",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    "CosineSimilarity",
    "PairwiseDistance",
    "L1Loss",
    "MSELoss",
    "SoftMarginLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "CosineEmbeddingLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]
