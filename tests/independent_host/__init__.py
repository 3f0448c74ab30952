"""An independent host written from the two notes and the protocol docs only.

It exists to show which seed checks judge a note's meaning and which still pin the
reference's layout, wording or arithmetic (issue 36). Nothing here reads model/ or
conformance/: its layout, notice wording, warning and retention arithmetic are its own.
"""
