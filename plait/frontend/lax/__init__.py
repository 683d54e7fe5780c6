"""``plait.lax``'s functions: thin wrappers over the primitives, with ``jax.lax``'s
signatures (``ops``: everything but indexing and convolution; ``slicing``: gather and
scatter; ``convolution``; ``windowed``: reduce_window).

No ``__all__`` here: the star imports re-export each module's own list, which
mypy follows; ``plait.lax`` builds the public list from them."""

from plait.frontend.lax.associative import *  # noqa: F403
from plait.frontend.lax.composite import *  # noqa: F403
from plait.frontend.lax.conversions import *  # noqa: F403
from plait.frontend.lax.convolution import *  # noqa: F403
from plait.frontend.lax.fft import *  # noqa: F403
from plait.frontend.lax.names import *  # noqa: F403
from plait.frontend.lax.ops import *  # noqa: F403
from plait.frontend.lax.ops import bind_dynamic_slice as bind_dynamic_slice
from plait.frontend.lax.parallel import *  # noqa: F403
from plait.frontend.lax.ragged import *  # noqa: F403
from plait.frontend.lax.scaled_dot import *  # noqa: F403
from plait.frontend.lax.slicing import *  # noqa: F403
from plait.frontend.lax.tokens import *  # noqa: F403
from plait.frontend.lax.windowed import *  # noqa: F403
