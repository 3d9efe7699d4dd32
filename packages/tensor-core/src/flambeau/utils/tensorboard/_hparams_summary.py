"""Hyperparameters and their metrics as summaries for the hparams plugin (``add_hparams``)."""

from __future__ import annotations

import logging

from google.protobuf import struct_pb2

import flambeau
from flambeau.utils.tensorboard._protos import one_value, plugin_metadata
from flambeau.utils.tensorboard._to_numpy import make_np

logger = logging.getLogger(__name__)


def _check_dicts(hparam_dict, metric_dict, hparam_domain_discrete):
    for name, given in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(given, dict):
            message = f"parameter: {name} should be a dictionary, nothing logged."
            logger.warning(message)
            raise TypeError(message)
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for name, domain in hparam_domain_discrete.items():
        if (
            name not in hparam_dict
            or not isinstance(domain, list)
            or not all(isinstance(d, type(hparam_dict[name])) for d in domain)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{name}] should be a list of same type as "
                f"hparam_dict[{name}]."
            )


def _domain(values, field):
    if values is None:
        return None
    return struct_pb2.ListValue(values=[struct_pb2.Value(**{field: v}) for v in values])


def _plugin_summary(tag, **content):
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
    return one_value(tag, metadata=plugin_metadata(PLUGIN_NAME, data))


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three ``Summary`` protos the hparams plugin reads, ``(experiment,
    session_start_info, session_end_info)``: the hyperparameters' names, types and
    discrete domains with the metrics' tags; the hyperparameters' values; a successful
    end. Values may be numbers (bools included, recorded as numbers as PyTorch records
    them), strings, one-element flambeau tensors or ``None`` (left out);
    ``hparam_domain_discrete`` maps a name to the list of values it can take. Anything
    else raises ``TypeError`` (not dicts, a bad domain) or ``ValueError`` (a value).

    >>> from flambeau.utils.tensorboard.summary import hparams
    >>> experiment, start, end = hparams({"lr": 0.1, "optimizer": "sgd"}, {"accuracy": 0.9})
    >>> [s.value[0].tag for s in (experiment, start, end)]
    ['_hparams_/experiment', '_hparams_/session_start_info', '_hparams_/session_end_info']
    """
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.metadata import (
        EXPERIMENT_TAG,
        SESSION_END_INFO_TAG,
        SESSION_START_INFO_TAG,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    hparam_domain_discrete = hparam_domain_discrete or {}
    _check_dicts(hparam_dict, metric_dict, hparam_domain_discrete)
    start = SessionStartInfo()
    infos = []
    for name, value in hparam_dict.items():
        if value is None:
            continue
        domain = hparam_domain_discrete.get(name)
        # bool is an int: like PyTorch, bools land here, as numbers.
        if isinstance(value, (int, float)):
            start.hparams[name].number_value = value
            data_type, domain = "DATA_TYPE_FLOAT64", _domain(domain, "number_value")
        elif isinstance(value, str):
            start.hparams[name].string_value = value
            data_type, domain = "DATA_TYPE_STRING", _domain(domain, "string_value")
        elif isinstance(value, flambeau.Tensor):
            start.hparams[name].number_value = make_np(value).reshape(-1)[0]
            data_type, domain = "DATA_TYPE_FLOAT64", None
        else:
            raise ValueError("value should be one of int, float, str, bool, or flambeau.Tensor")
        infos.append(HParamInfo(name=name, type=DataType.Value(data_type), domain_discrete=domain))
    metrics = [MetricInfo(name=MetricName(tag=tag)) for tag in metric_dict]
    experiment = Experiment(hparam_infos=infos, metric_infos=metrics)
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (
        _plugin_summary(EXPERIMENT_TAG, experiment=experiment),
        _plugin_summary(SESSION_START_INFO_TAG, session_start_info=start),
        _plugin_summary(SESSION_END_INFO_TAG, session_end_info=end),
    )
