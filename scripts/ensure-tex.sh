#!/usr/bin/env bash
# Make sure latexmk and pdflatex exist. Install them from Debian/Ubuntu packages when we may;
# otherwise say, in one sentence, how to get them.
set -euo pipefail
have() { command -v "$1" >/dev/null 2>&1; }
have latexmk && have pdflatex && exit 0
PKGS="latexmk texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then have sudo && sudo -n true 2>/dev/null && SUDO="sudo -n"; fi
if have apt-get && { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }; then
  echo "ensure-tex: installing TeX Live and latexmk with apt-get ($PKGS)" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
  have latexmk && have pdflatex && exit 0
fi
echo "ensure-tex: latexmk and pdflatex are missing and cannot be installed here; install TeX Live ($PKGS) or run inside 'nix develop'." >&2
exit 1
