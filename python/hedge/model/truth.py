"""What only a simulator knows: the ground truth a clairvoyant reference policy is given.

No ApplicationMaster can see this; ``hedge serve`` refuses a policy that needs it
(``Policy.clairvoyant``). It exists to bound what any real policy could gain on a workload.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Truth:
    """For one snapshot of one job.

    - ``remaining``: per attempt row of the snapshot, the seconds until it would finish if
      nothing changed (``inf`` for a waiting attempt);
    - ``copy_time``: per task of the job (index as in the snapshot), the seconds a copy
      launched now would take on a typical node, start-up included (the very slowdown the
      simulator will give that copy; its node's speed and load may still differ).
    """

    remaining: np.ndarray
    copy_time: np.ndarray
