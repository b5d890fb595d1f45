{
  description = "numa-lb-repro: five load-balancing papers reproduced (dev shell and apps)";

  # nixpkgs of the nixos-26.05 release line, pinned by revision (the versions it gives, against
  # requirements.lock, are in nix/versions.yaml and the README). flake.lock is not committed: the
  # build machines cannot reach GitHub, so `nix flake lock` adds the narHash on first use.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/2faec786b850fecda640373ddb60e230ab4b8ac0";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # The two packages nixpkgs lacks, from the PyPI releases requirements.lock pins.
      missing = pkgs: final: prev: {
        snakemake-executor-plugin-slurm-jobstep = final.buildPythonPackage rec {
          pname = "snakemake_executor_plugin_slurm_jobstep";
          version = "0.6.1";
          pyproject = true;
          src = pkgs.fetchPypi { inherit pname version; hash = "sha256-DtL+qojR1k813Ga0mQ8THT8VFzPt7OkNXpUt7A6Pf+s="; };
          build-system = [ final.poetry-core ];
          dependencies = [ final.snakemake-interface-common final.snakemake-interface-executor-plugins ];
          pythonRelaxDeps = true;
          doCheck = false;
        };
        snakemake-executor-plugin-slurm = final.buildPythonPackage rec {
          pname = "snakemake_executor_plugin_slurm";
          version = "2.8.0";
          pyproject = true;
          src = pkgs.fetchPypi { inherit pname version; hash = "sha256-l9kxKEsUUranr9LxttIALCeM56Xo9qmC3HdoiBfTA5k="; };
          build-system = [ final.hatchling ];
          dependencies = [
            final.numpy final.pandas final.pyyaml final.throttler final.snakemake-executor-plugin-slurm-jobstep
            final.snakemake-interface-common final.snakemake-interface-executor-plugins
          ];
          pythonRelaxDeps = true;   # nixpkgs' numpy may be older than the plugin's lower bound
          doCheck = false;
        };
      };

      # Every Python package of pyproject.toml (dependencies, extras workflow and test, group
      # build) but mutmut, which nixpkgs packages as an application only: `make mutation` needs
      # the virtualenv (`make env`).
      pythonPackages = ps: with ps; [
        simpy numpy numba scipy pandas pyarrow matplotlib jsonschema pyyaml tqdm threadpoolctl
        snakemake snakemake-executor-plugin-slurm
        pytest pytest-benchmark hypothesis pypdf nbclient nbformat ipykernel nbconvert
        setuptools wheel
      ];
      python = pkgs: (pkgs.python3.override { packageOverrides = missing pkgs; }).withPackages pythonPackages;

      # `simcore` runs the checkout's code with the Nix Python (no editable install in the store).
      simcore = pkgs: pkgs.writeShellScriptBin "simcore" ''
        exec ${python pkgs}/bin/python -m simcore.cli "$@"
      '';
      tools = pkgs: [
        (python pkgs)
        (simcore pkgs)
        pkgs.uv
        pkgs.ruff
        pkgs.gnumake
        pkgs.git
        (pkgs.texlive.combine {
          inherit (pkgs.texlive) scheme-basic latexmk psnfss geometry booktabs tools graphics xcolor placeins
            hyperref collection-fontsrecommended;
        })
      ];
      # The Makefile uses this Python instead of building .venv/ (see NUMA_LB_NIX_PYTHON there).
      setup = pkgs: ''
        export NUMA_LB_NIX_PYTHON=${python pkgs}
        export PYTHONPATH="$PWD''${PYTHONPATH:+:$PYTHONPATH}"
      '';
      app = pkgs: verb: {
        type = "app";
        program = toString (pkgs.writeShellScript "numa-lb-repro-${verb}" ''
          export PATH=${pkgs.lib.makeBinPath (tools pkgs)}:$PATH
          ${setup pkgs}
          exec make ${verb} "$@"
        '');
      };
    in
    {
      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = tools pkgs;
          shellHook = ''
            ${setup pkgs}
            echo "numa-lb-repro dev shell (Python from nixpkgs): 'make test' or 'make reproduce SCALE=smoke|quick|full'"
          '';
        };
      });
      apps = forAll (pkgs: {
        reproduce = app pkgs "reproduce";
        test = app pkgs "test";
        default = app pkgs "reproduce";
      });
    };
}
