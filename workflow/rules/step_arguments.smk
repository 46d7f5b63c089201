# Arguments that the steps derived from the templates (step_templates.smk) share, as lists for {params.args:q}.


def tensorboard_args(run):
    """tensorboard_arg as a list of arguments, for {params.args:q}."""
    return tensorboard_arg(run).split()


def figure_args():
    """A plotting step's --formats and --dpi (config `figures`)."""
    return ["--formats", *config["figures"]["formats"], "--dpi", config["figures"]["dpi"]]
