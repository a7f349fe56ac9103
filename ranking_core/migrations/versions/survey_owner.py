"""Each survey belongs to someone: the signed-in user who created it (empty: the operator, from
the command line or a dashboard without a login). Surveys made before are the operator's.

Revision ID: survey_owner
Revises: surveys
"""

from ranking_core.migrations.columns import added_text_column

revision = "survey_owner"
down_revision = "surveys"
upgrade, downgrade = added_text_column("surveys", "owner", 320)
