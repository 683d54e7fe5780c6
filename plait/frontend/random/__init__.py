"""``plait.random``'s implementation: keys (:mod:`.keys`), the threefry2x32 generator
(:mod:`.threefry`), the common samplers (:mod:`.samplers`), the continuous
distributions (:mod:`.distributions`, :mod:`.gamma`) and the discrete ones
(:mod:`.discrete`)."""
