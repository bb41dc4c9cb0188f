"""Returns its input unchanged: no op is ever applied or captured; only LaunchCounter is written."""

from reference.mutants._base import export, fresh_reference, fresh_template

# The launch counter is five lines every student gets right, so it is kept
# (up to about 5 of the 100 points); an empty op list legitimately returns
# the input (two more cases). Anything above 10% means some case accepts an
# output that was never computed.
MAX_PERCENT = 10.0

ref = fresh_reference(__name__)
template = fresh_template(__name__)


def run_eager(ops, x):
    return x


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops = list(ops)
        self.graphs = {}

    @property
    def num_captured(self):
        return 0

    def __call__(self, x):
        return x


class PiecewiseGraphRunner:
    def __init__(self, ops, is_capturable, capture_sizes=None):
        self.ops = list(ops)

    @property
    def num_graphs(self):
        return 0

    def __call__(self, x):
        return x


def fuse_elementwise(ops):
    return list(ops)


template.LaunchCounter = ref.LaunchCounter
template.run_eager = run_eager
template.GraphRunner = GraphRunner
template.PiecewiseGraphRunner = PiecewiseGraphRunner
template.fuse_elementwise = fuse_elementwise
export(template, globals())
