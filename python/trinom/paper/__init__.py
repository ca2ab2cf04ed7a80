"""The thesis' and the ARRAY'21 paper's own datasets (docs/layout.md's ``paper/``): the thesis' seven option
distributions (:mod:`.option_generator`, also ``trinom.generator``) and the paper's bond datasets U1..S2
(:mod:`.bond_generator`, also ``trinom.bonds.generator``)."""
