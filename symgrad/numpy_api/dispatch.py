"""`array_function_dispatch`: lets eager tensors run an sg.* function their own way."""
import functools
import inspect


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



def dispatch_all_arguments(fn):
    """array_function_dispatch for a function whose arrays may come by keyword (SciPy's
    `norm.logpdf(x, scale=s)`): arguments are bound to fn's signature (defaults filled in) and all
    passed by position, so an eager tensor given by name is seen too."""
    signature = inspect.signature(fn)
    dispatched = array_function_dispatch(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dispatched(*bound.args)
    return call
