"""The shipped behaviour specs (YAML data); see README.md in this folder."""
