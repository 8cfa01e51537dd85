"""`array_function_dispatch`: lets eager tensors run an sg.* function their own way."""
import functools


def array_function_dispatch(fn):
    """fn, letting a value type among its positional arguments run it its own way through
    `__sg_function__` (eager tensors replay a traced plan of the call), as NumPy's protocol of that name."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        for arg in args:
            handler = getattr(type(arg), "__sg_function__", None)
            if handler is not None:
                return handler(fn, args, kwargs)
        return fn(*args, **kwargs)
    return call

