# Arguments that the steps derived from the templates (step_templates.smk) share, as lists for {params.args:q}.


def figure_args():
    """A plotting step's --formats and --dpi (config `figures`)."""
    return ["--formats", *config["figures"]["formats"], "--dpi", config["figures"]["dpi"]]
