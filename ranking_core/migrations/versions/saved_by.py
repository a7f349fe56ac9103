"""Each record remembers who saved it (the signed-in user's e-mail or name; empty without login).

Revision ID: saved_by
Revises: initial
"""

from ranking_core.migrations.columns import added_text_column

revision = "saved_by"
down_revision = "initial"
upgrade, downgrade = added_text_column("records", "saved_by", 320)
