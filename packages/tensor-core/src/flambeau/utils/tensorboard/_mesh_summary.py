"""Meshes and point clouds as summaries for the mesh plugin (``add_mesh``)."""

from __future__ import annotations

import json

from tensorboard.compat.proto.summary_pb2 import Summary

from flambeau.utils.tensorboard._protos import float_tensor
from flambeau.utils.tensorboard._to_numpy import as_array


def _component(tag, display_name, description, tensor, content_type, components, config):
    from tensorboard.plugins.mesh import metadata

    array = as_array(tensor)
    shape = [int(size) for size in array.shape]
    summary_metadata = metadata.create_summary_metadata(
        tag, display_name, content_type, components, shape, description, json_config=config
    )
    return Summary.Value(
        tag=metadata.get_instance_name(tag, content_type),
        tensor=float_tensor(array.reshape(-1).tolist(), shape[:3]),
        metadata=summary_metadata,
    )


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """A ``Summary`` with one value per given part of a mesh or point cloud, each
    ``(B, N, 3)``: ``vertices`` (coordinates), ``faces`` (vertex indices of each
    triangle) and ``colors`` (per vertex); ``None`` leaves a part out. ``config_dict``
    configures the Three.js scene (camera, lights, materials).

    >>> from flambeau.utils.tensorboard.summary import mesh
    >>> points = flambeau.tensor([[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]])
    >>> [v.tag for v in mesh("cloud", points, None, None, None).value]
    ['cloud_VERTEX']
    """
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [
        (tensor, content_type)
        for tensor, content_type in (
            (vertices, MeshPluginData.VERTEX),
            (faces, MeshPluginData.FACE),
            (colors, MeshPluginData.COLOR),
        )
        if tensor is not None
    ]
    components = metadata.get_components_bitmask([content_type for _, content_type in parts])
    return Summary(
        value=[
            _component(tag, display_name, description, tensor, kind, components, config)
            for tensor, kind in parts
        ]
    )
