"""The layout of the custom scalars plugin as a summary (``add_custom_scalars``)."""

from __future__ import annotations

from tensorboard.plugins.custom_scalar import layout_pb2

from flambeau.utils.tensorboard._protos import one_value, plugin_metadata, string_tensor


def _chart(title, kind, tags):
    if kind == "Margin":
        if len(tags) != 3:
            raise AssertionError("len(tags) != 3")
        value, lower, upper = tags
        series = layout_pb2.MarginChartContent.Series(value=value, lower=lower, upper=upper)
        return layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series]))
    return layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags))


def custom_scalars(layout):
    """A ``Summary`` holding the custom scalars plugin's layout. ``layout`` maps each
    category title to its charts, ``{chart title: [kind, tags]}``: kind ``"Margin"``
    takes three scalar tags (value, lower bound, upper bound), any other kind (PyTorch
    says ``"Multiline"``) draws every tag (a regular expression) on one chart.

    >>> from flambeau.utils.tensorboard.summary import custom_scalars
    >>> value = custom_scalars({"loss": {"all": ["Multiline", ["loss/.*"]]}}).value[0]
    >>> value.tag, value.metadata.plugin_data.plugin_name
    ('custom_scalars__config__', 'custom_scalars')
    """
    categories = [
        layout_pb2.Category(
            title=category,
            chart=[_chart(title, spec[0], spec[1]) for title, spec in charts.items()],
        )
        for category, charts in layout.items()
    ]
    config = layout_pb2.Layout(category=categories).SerializeToString()
    return one_value(
        "custom_scalars__config__",
        tensor=string_tensor(config, []),
        metadata=plugin_metadata("custom_scalars"),
    )
