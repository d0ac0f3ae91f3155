"""The one exception type that reaches users as a clear, single-line message."""


class HedgeError(Exception):
    """A problem the user can fix: bad input, a missing file, an impossible setting.

    The message must name the file/field/value at fault and what was expected. The CLI
    prints it as one line (no traceback) and exits with status 2.
    """


def where(path: object, line: int | None = None, field: str | None = None) -> str:
    """Format a location prefix such as ``trace.csv:12: field 'time'``."""
    text = str(path)
    if line is not None:
        text += f":{line}"
    if field is not None:
        text += f": field '{field}'"
    return text
