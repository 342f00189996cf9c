""":class:`DcgmException`, the exception NVIDIA's object layer raises for misuse that is not a
DCGM error. Programs name it ``pydcgm.DcgmException``; it is defined here, below the modules
that raise it (``DcgmGroup``) and the one that gathers the object layer (``pydcgm``), so that
neither has to import the other for it."""


class DcgmException(Exception):
    """Misuse of the object layer that is not a DCGM error (a group without id or name, a GPU
    added to a static group, a policy callback of ``None``)."""


# Programs know it as pydcgm's (tracebacks and pickles name it so; pydcgm re-exports it).
DcgmException.__module__ = "dcgm.compat.pydcgm"
