"""Text as a summary (``add_text``)."""

from __future__ import annotations

from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from flambeau.utils.tensorboard._protos import one_value, plugin_metadata, string_tensor


def text(tag, text):
    """A ``Summary`` holding ``text`` (Markdown) for the text plugin, under the tag
    ``tag + "/text_summary"``.

    >>> from flambeau.utils.tensorboard.summary import text
    >>> value = text("notes", "*hello*").value[0]
    >>> value.tag, value.tensor.string_val[0].decode()
    ('notes/text_summary', '*hello*')
    """
    metadata = plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    tensor = string_tensor(text.encode("utf_8"), [1])
    return one_value(tag + "/text_summary", metadata=metadata, tensor=tensor)
