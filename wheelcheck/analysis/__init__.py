"""Pure analyses over a WheelModel: same model and policies in, same findings out."""
