"""Which tier a whole model runs: ``reference_tier(model)``.

The recurrent and attention layers take ``reference=`` in their constructors
(False, the fast tier, by default) and keep it as a plain attribute,
``layer.reference``, read by their ``forward`` when it calls the functional
form.  A lesson or a test that wants every layer of a model on the tier a
student reads sets them all at once:

    model = reference_tier(Seq2Seq(...))          # every layer with .reference now runs the reference
"""


def reference_tier(module, enabled=True):
    """Set ``.reference = enabled`` on ``module`` and every submodule that has the attribute; return ``module``."""
    for layer in module.modules():
        if hasattr(layer, "reference"):
            layer.reference = bool(enabled)
    return module
