"""Loading models: the catalogue, the hub, model files, converted copies, devices, model cards."""
