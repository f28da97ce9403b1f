// Check your understanding: answers the book's quizzes (book/_ext/quizzes.py) on the static
// site, with no kernel. The page holds each option's feedback, hidden; "Check" shows the chosen
// option's feedback (or, for a number, the feedback of the nearest listed number) under the
// question, in a live region that a screen reader reads out. The labels come from the form's
// data-*-label attributes, which the build writes in the edition's language.
(function () {
  "use strict";

  function parseNumber(text) {
    var cleaned = String(text).trim().replace(/[\s,_]/g, "").replace(/[。．]/g, ".");
    if (!/^[-+−]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?%?$/i.test(cleaned)) return null;
    var value = parseFloat(cleaned.replace("−", "-"));
    return isFinite(value) ? value : null;
  }

  function show(form, ok, status, feedback) {
    var result = form.querySelector(".attnbook-quiz-result");
    result.textContent = "";
    result.className = "attnbook-quiz-result " + (ok === null ? "" : ok ? "is-correct" : "is-wrong");
    var strong = document.createElement("strong");
    strong.textContent = status;
    result.appendChild(strong);
    if (feedback) {
      var copy = feedback.cloneNode(true);
      copy.hidden = false;
      copy.removeAttribute("hidden");
      result.appendChild(document.createTextNode(" "));
      result.appendChild(copy);
    }
  }

  function checkChoice(form) {
    var chosen = form.querySelector("input[type=radio]:checked");
    if (!chosen) return show(form, null, form.dataset.chooseLabel, null);
    var ok = chosen.hasAttribute("data-correct");
    var feedback = chosen.parentNode.querySelector(".attnbook-quiz-feedback");
    show(form, ok, ok ? form.dataset.correctLabel : form.dataset.wrongLabel, feedback);
  }

  function checkNumber(form) {
    var value = parseNumber(form.querySelector("input[type=text]").value);
    if (value === null) return show(form, null, form.dataset.enterLabel, null);
    var tolerance = parseFloat(form.dataset.tolerance) || 0;
    var slack = tolerance + 1e-9 * Math.max(1, Math.abs(value));
    var options = form.querySelectorAll(".attnbook-quiz-option");
    for (var i = 0; i < options.length; i++) {
      var listed = parseFloat(options[i].dataset.value);
      if (Math.abs(value - listed) <= slack) {
        var ok = options[i].hasAttribute("data-correct");
        var feedback = options[i].querySelector(".attnbook-quiz-feedback");
        return show(form, ok, ok ? form.dataset.correctLabel : form.dataset.wrongLabel, feedback);
      }
    }
    var note = document.createElement("span");
    note.textContent = form.dataset.otherLabel;
    show(form, false, form.dataset.wrongLabel, note);
  }

  function setUp(form) {
    var button = form.querySelector(".attnbook-quiz-check");
    button.hidden = false;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (form.dataset.kind === "number") checkNumber(form);
      else checkChoice(form);
    });
    // A new choice clears the last verdict, so the feedback on screen is always the chosen one's.
    form.addEventListener("change", function () {
      var result = form.querySelector(".attnbook-quiz-result");
      result.textContent = "";
      result.className = "attnbook-quiz-result";
    });
  }

  function init() {
    var forms = document.querySelectorAll("form.attnbook-quiz");
    for (var i = 0; i < forms.length; i++) setUp(forms[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
