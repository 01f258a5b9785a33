"""What every learner's chain shares: the one driver (:func:`~strgm.chains.driver.drive`:
steps, trace, checkpoints, resume, burn-in and thinning), the chain-state codec
(strict-JSON checkpoints with their format and kind checked, PCG64 states, trace rows,
fingerprints of the data a chain runs on) and :class:`~strgm.chains.codec.ChainState`,
the save/load/rng of every state class (PCFG estimators and samplers, TSG and HMM
samplers)."""
