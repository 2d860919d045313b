# Sourced by the run_*.sh scripts: install this checkout into a scratch folder and work from a neutral one, so the
# installed package is what runs. Sets `out` (the first argument, created), `repo` and `site`; a wrong call ends
# with the usage line the script passes as USAGE.
set -u
out=${1:?usage: $USAGE}
out=$(realpath -m "$out")
repo=$PWD
site=$(mktemp -d)
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
python3 -m pip install -q --no-deps --no-build-isolation --no-compile --target "$site" "$repo" || exit 2
cd "$(mktemp -d)"
