"""``plait.random``'s implementation: keys (:mod:`.keys`), the threefry2x32 and rbg
generators (:mod:`.threefry`, :mod:`.rbg`) and the key primitives' decompositions over
them (:mod:`.key_impls`), the common samplers (:mod:`.samplers`), the continuous
distributions (:mod:`.distributions`, :mod:`.gamma`) and the discrete ones
(:mod:`.discrete`)."""
