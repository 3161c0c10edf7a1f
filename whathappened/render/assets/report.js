// Hover details for the timeline picture, links between markers and evidence rows, and the evidence filter.
// Text only ever goes in through textContent: the data-tip values come from cluster logs.
(function () {
  "use strict";
  var tip = document.getElementById("tip");

  function owner(node, selector) {
    return node && node.closest ? node.closest(selector) : null;
  }

  function place(x, y) {
    var left = Math.min(x + 14, window.innerWidth - tip.offsetWidth - 8);
    var top = y + 16;
    if (top + tip.offsetHeight > window.innerHeight - 8) {
      top = Math.max(8, y - tip.offsetHeight - 12);
    }
    tip.style.left = Math.max(8, left) + "px";
    tip.style.top = top + "px";
  }

  function show(target, x, y) {
    tip.textContent = target.getAttribute("data-tip");
    tip.hidden = false;
    place(x, y);
  }

  function hide() {
    tip.hidden = true;
  }

  function markerFor(index) {
    return document.querySelector('.marker[data-index="' + index + '"]');
  }

  function setHot(row, on) {
    var marker = markerFor(row.getAttribute("data-index"));
    row.classList.toggle("hot", on);
    if (marker) {
      marker.classList.toggle("hot", on);
    }
  }

  document.addEventListener("mouseover", function (event) {
    var target = owner(event.target, "[data-tip]");
    if (target) {
      show(target, event.clientX, event.clientY);
    } else {
      hide();
    }
    var row = owner(event.target, "tr.ev");
    if (row) {
      setHot(row, true);
    }
  });
  document.addEventListener("mouseout", function (event) {
    var row = owner(event.target, "tr.ev");
    if (row && !row.contains(event.relatedTarget)) {
      setHot(row, false);
    }
  });
  document.addEventListener("mousemove", function (event) {
    if (!tip.hidden) {
      place(event.clientX, event.clientY);
    }
  });
  document.addEventListener("focusin", function (event) {
    var target = owner(event.target, "[data-tip]");
    if (target) {
      var box = target.getBoundingClientRect();
      show(target, box.right, box.bottom);
    }
  });
  document.addEventListener("focusout", hide);

  // Jumping to an event (a marker, a chip, a chain step) unfolds its raw payload.
  function reveal() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    if (!/^ev-[0-9]+$/.test(id)) {
      return;
    }
    var row = document.getElementById(id);
    var details = row ? row.querySelector("details") : null;
    if (details) {
      details.open = true;
    }
  }
  window.addEventListener("hashchange", reveal);
  reveal();

  var only = document.getElementById("only-cited");
  var evidence = document.getElementById("evidence");
  if (only && evidence) {
    only.addEventListener("change", function () {
      evidence.classList.toggle("only-cited", only.checked);
    });
  }
  document.documentElement.setAttribute("data-ready", "1");
})();
